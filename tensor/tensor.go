// Package tensor holds Plumb's dense tensors and ragged batches.
//
// A Tensor is a contiguous, row-major block of float32, float64, int32 or
// int64 elements with a shape. Its storage is a plain Go slice. Package
// tensor/dense shares it zero-copy with gorgonia.org/tensor's *Dense in both
// directions; it is a separate package so that this one, which every Plumb
// program imports, pulls in no Gorgonia package. We keep the slice rather
// than a *Dense per tensor because Gorgonia's Dense cannot hold a zero-size
// shape such as [0 8] (its constructor panics), and ragged batches with
// empty sequences need those; kernels also want the typed slice without an
// interface call per op.
//
// Views (Reshape, Row, SliceRows) share storage with their source;
// everything that would make storage non-contiguous (Transpose, Slice on an
// inner axis) returns a copy, so every kernel can assume contiguity.
//
// Concurrency: a Tensor is a slice and a shape, with the slice's rules:
// any number of goroutines may read one tensor (and its views) at once,
// but a write (Fill, SetAt, the typed slices' elements, an optimizer's
// update) must not overlap any other access to the same storage. The
// process-wide storage pool behind New, Zeros and their friends is safe for
// concurrent use; a Recycler, which feeds it, is not (one per tape).
package tensor

import (
	"fmt"
)

// Tensor is a dense, contiguous, row-major n-dimensional array.
// The zero value is not usable; build tensors with New, FromSlice and friends.
type Tensor struct {
	dtype DType
	shape Shape
	data  any           // []float32, []float64, []int32 or []int64 of exactly shape.Size() elements; nil on a device
	dev   DeviceStorage // the storage when it is on a device (see Device), else nil
	owned bool          // data (or dev) was allocated here, not a caller's slice, so a Recycler may pool (or free) it
}

// New returns a zero-filled tensor of the given dtype and shape. Its
// storage may come from the pool that Recycler fills (see Recycler).
func New(dt DType, shape ...int) (*Tensor, error) {
	if err := checkDims(shape); err != nil {
		return nil, err
	}
	if dt.Size() == 0 {
		return nil, fmt.Errorf("tensor: invalid dtype %v", dt)
	}
	return alloc(dt, shape, true), nil
}

// Zeros is New for callers that have already validated shape; it panics on
// a negative dim, which only a programming error inside Plumb can produce.
func Zeros(dt DType, shape ...int) *Tensor {
	t, err := New(dt, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Empty is Zeros without the zeroing: its storage, when it comes from the
// pool, holds whatever the last tensor of its size class left there (as
// numpy.empty and torch.empty), so the caller must set every element
// before anything reads one. Kernels that overwrite their whole output
// take it to skip a pass over memory (clearing a large output on one core
// while the others wait). It panics on a negative dim, as
// Zeros.
func Empty(dt DType, shape ...int) *Tensor {
	if err := checkDims(shape); err != nil {
		panic(err)
	}
	return alloc(dt, shape, false)
}

// ZerosLike returns a zero tensor with t's dtype and shape.
func ZerosLike(t *Tensor) *Tensor { return Zeros(t.dtype, t.shape...) }

// Full returns a tensor of the given shape with every element set to v.
func Full(dt DType, v float64, shape ...int) (*Tensor, error) {
	t, err := New(dt, shape...)
	if err != nil {
		return nil, err
	}
	t.Fill(v)
	return t, nil
}

// Ones returns a tensor of ones.
func Ones(dt DType, shape ...int) (*Tensor, error) { return Full(dt, 1, shape...) }

// FromSlice wraps data (not copied) as a tensor of the given shape.
// With no shape, the tensor is 1-D of len(data).
func FromSlice[T Elem](data []T, shape ...int) (*Tensor, error) {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	if err := checkDims(shape); err != nil {
		return nil, err
	}
	if Shape(shape).Size() != len(data) {
		return nil, fmt.Errorf("tensor: %d elements do not fill shape %v (%d)", len(data), Shape(shape), Shape(shape).Size())
	}
	return &Tensor{dtype: DTypeOf[T](), shape: Shape(shape).Clone(), data: data}, nil
}

// MustFromSlice is FromSlice for literals in tests and examples; it panics on a size mismatch.
func MustFromSlice[T Elem](data []T, shape ...int) *Tensor {
	t, err := FromSlice(data, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Scalar returns a rank-0 tensor holding v.
func Scalar[T Elem](v T) *Tensor {
	return &Tensor{dtype: DTypeOf[T](), shape: Shape{}, data: []T{v}}
}

// Data returns t's backing slice as []T, nil for a tensor on a device
// (which has no host slice; see To). It panics if T does not match t's
// dtype: that is a programming error, never a user's data error.
func Data[T Elem](t *Tensor) []T {
	s, ok := t.data.([]T)
	if !ok {
		if t.dev != nil && t.dtype == DTypeOf[T]() {
			return nil
		}
		panic(fmt.Sprintf("tensor: Data[%T] on a %v tensor", *new(T), t.dtype))
	}
	return s
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns the dims. The caller must not modify the returned slice.
func (t *Tensor) Shape() Shape { return t.shape }

// Rank is the number of axes.
func (t *Tensor) Rank() int { return len(t.shape) }

// Size is the number of elements.
func (t *Tensor) Size() int { return t.shape.Size() }

// Dim returns the size of axis i (negative counts from the end).
func (t *Tensor) Dim(i int) int {
	if i < 0 {
		i += len(t.shape)
	}
	return t.shape[i]
}

// Raw returns the backing slice as an interface ([]float32, []float64, []int32 or []int64),
// nil for a tensor on a device.
func (t *Tensor) Raw() any { return t.data }

// Float32s returns the backing []float32; it panics on another dtype.
func (t *Tensor) Float32s() []float32 { return Data[float32](t) }

// Float64s returns the backing []float64; it panics on another dtype.
func (t *Tensor) Float64s() []float64 { return Data[float64](t) }

// Int32s returns the backing []int32; it panics on another dtype.
func (t *Tensor) Int32s() []int32 { return Data[int32](t) }

// Int64s returns the backing []int64; it panics on another dtype.
func (t *Tensor) Int64s() []int64 { return Data[int64](t) }

// At returns element i of the flat storage as a float64, whatever the dtype.
func (t *Tensor) At(i int) float64 {
	switch s := t.data.(type) {
	case []float32:
		return float64(s[i])
	case []float64:
		return s[i]
	case []int32:
		return float64(s[i])
	case []int64:
		return float64(s[i])
	}
	panic(t.onDevice("At").Error())
}

// SetAt sets element i of the flat storage from a float64 (truncated for ints).
func (t *Tensor) SetAt(i int, v float64) {
	switch s := t.data.(type) {
	case []float32:
		s[i] = float32(v)
	case []float64:
		s[i] = v
	case []int32:
		s[i] = int32(v)
	case []int64:
		s[i] = int64(v)
	}
}

// Item returns the single element of a size-1 tensor as a float64.
func (t *Tensor) Item() (float64, error) {
	if t.Size() != 1 {
		return 0, fmt.Errorf("tensor: Item on shape %v, want exactly one element", t.shape)
	}
	if t.dev != nil {
		return 0, t.onDevice("Item")
	}
	return t.At(0), nil
}

// Fill sets every element to v. On a device it panics if the device
// fails (its storage was freed), as a kernel's failure would.
func (t *Tensor) Fill(v float64) {
	if t.dev != nil {
		if err := t.dev.Fill(v); err != nil {
			panic(fmt.Sprintf("tensor: Fill on %v: %v", t.Device(), err))
		}
		return
	}
	switch s := t.data.(type) {
	case []float32:
		fill(s, float32(v))
	case []float64:
		fill(s, v)
	case []int32:
		fill(s, int32(v))
	case []int64:
		fill(s, int64(v))
	}
}

// fill sets s to v; zero is a clear, which the runtime vectorises (a
// step's ZeroGrad on every parameter).
func fill[T Elem](s []T, v T) {
	if v == 0 {
		clear(s)
		return
	}
	for i := range s {
		s[i] = v
	}
}

// Ints returns the elements of an integer tensor as []int (a copy), for
// labels and indices. Float tensors are an error.
func (t *Tensor) Ints() ([]int, error) {
	if t.dev != nil {
		return nil, t.onDevice("Ints")
	}
	out := make([]int, t.Size())
	switch s := t.data.(type) {
	case []int32:
		for i, v := range s {
			out[i] = int(v)
		}
	case []int64:
		for i, v := range s {
			out[i] = int(v)
		}
	default:
		return nil, fmt.Errorf("tensor: want an int32 or int64 tensor, got %v", t.dtype)
	}
	return out, nil
}

// Clone returns a deep copy, on t's device. On a device it panics if the
// device cannot allocate the copy, as Zeros does for an impossible shape.
func (t *Tensor) Clone() *Tensor {
	if t.dev != nil {
		s, err := t.dev.Clone()
		if err != nil {
			panic(fmt.Sprintf("tensor: Clone on %v: %v", t.Device(), err))
		}
		return OnDevice(t.dtype, t.shape, s)
	}
	c := alloc(t.dtype, t.shape, false)
	copyData(c.data, t.data)
	return c
}

// CopyFrom copies src's elements into t; dtypes and sizes must match. Either
// may be on a device: this is also how data moves into existing storage
// (a checkpoint restored into parameters on a GPU).
func (t *Tensor) CopyFrom(src *Tensor) error {
	if t == nil || src == nil {
		return fmt.Errorf("tensor: CopyFrom with a nil tensor")
	}
	if t.dtype != src.dtype || t.Size() != src.Size() {
		return fmt.Errorf("tensor: CopyFrom %v %v into %v %v", src.dtype, src.shape, t.dtype, t.shape)
	}
	switch {
	case t.dev == nil && src.dev == nil:
		copyData(t.data, src.data)
		return nil
	case t.dev == nil:
		return src.dev.Download(t)
	case src.dev == nil:
		return t.dev.Upload(src)
	case t.Device() != src.Device():
		return fmt.Errorf("tensor: CopyFrom %v into %v: move it with To first", src.Device(), t.Device())
	}
	return t.dev.CopyFrom(src.dev)
}

func copyData(dst, src any) {
	switch d := dst.(type) {
	case []float32:
		copy(d, src.([]float32))
	case []float64:
		copy(d, src.([]float64))
	case []int32:
		copy(d, src.([]int32))
	case []int64:
		copy(d, src.([]int64))
	}
}

// Cast returns a copy converted to dtype dt (t itself when dt matches).
func (t *Tensor) Cast(dt DType) (*Tensor, error) {
	if dt == t.dtype {
		return t, nil
	}
	if t.dev != nil {
		return nil, t.onDevice("Cast")
	}
	out, err := New(dt, t.shape...)
	if err != nil {
		return nil, err
	}
	for i := range t.Size() {
		out.SetAt(i, t.At(i))
	}
	return out, nil
}

// SameShape reports whether a and b have equal shapes (false when either
// is nil).
func SameShape(a, b *Tensor) bool { return a != nil && b != nil && a.shape.Equal(b.shape) }
