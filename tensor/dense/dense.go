// Package dense shares Plumb tensors zero-copy with gorgonia.org/tensor's
// *Dense, in both directions, for programs that already hold Gorgonia
// tensors.
//
// It is a separate package so that package tensor, which every Plumb
// program imports, does not pull in gorgonia.org/tensor and its many
// transitive packages: only a program that imports this package pays for
// them. Plumb keeps its own storage (a typed Go slice per tensor) rather
// than a *Dense because Gorgonia's Dense cannot hold a zero-size shape
// such as [0 8], which ragged batches with empty sequences need, and
// kernels want the typed slice without an interface call per op. The
// project was asked to use gorgonia.org/tensor where it serves; this
// interop is where it does.
package dense

import (
	"fmt"
	"reflect"

	gt "gorgonia.org/tensor"

	"github.com/plumbml/plumb/tensor"
)

// FromTensor returns a gorgonia.org/tensor *Dense that shares t's storage
// (no copy): a write through either shows in the other. Gorgonia cannot
// represent zero-size shapes, so those return an error.
func FromTensor(t *tensor.Tensor) (*gt.Dense, error) {
	if t == nil {
		return nil, fmt.Errorf("dense: FromTensor of a nil tensor")
	}
	if t.Size() == 0 {
		return nil, fmt.Errorf("dense: gorgonia Dense cannot hold zero-size shape %v", t.Shape())
	}
	return gt.New(gt.WithShape(t.Shape()...), gt.WithBacking(t.Raw())), nil
}

// ToTensor wraps a gorgonia *Dense as a Plumb tensor (a masked one is an
// error: Plumb tensors have no mask). A contiguous, non-view Dense shares
// its storage (no copy); a view or transposed Dense is materialized first,
// because every Plumb kernel assumes contiguous storage.
func ToTensor(d *gt.Dense) (*tensor.Tensor, error) {
	if d == nil {
		return nil, fmt.Errorf("dense: ToTensor of a nil Dense")
	}
	if d.IsMasked() {
		return nil, fmt.Errorf("dense: ToTensor of a masked Dense of shape %v: Plumb tensors have no mask", d.Shape())
	}
	if d.IsView() || !d.IsNativelyAccessible() || d.RequiresIterator() {
		d = d.Materialize().(*gt.Dense)
	}
	data := d.Data()
	if d.IsScalar() {
		// Dense.Data returns the element itself for shape (); take the
		// one-element backing slice instead, so that scalars share too.
		data = scalarBacking(d)
	}
	shape := []int(d.Shape())
	switch s := data.(type) {
	case []float32:
		return wrap(s, shape)
	case []float64:
		return wrap(s, shape)
	case []int32:
		return wrap(s, shape)
	case []int64:
		return wrap(s, shape)
	}
	return nil, fmt.Errorf("dense: unsupported backing %v of a Dense of shape %v (want []float32, []float64, []int32 or []int64)",
		reflect.TypeOf(data), d.Shape())
}

// wrap shares s as a tensor of the given shape. It goes through Reshape
// because FromSlice reads an empty shape as "1-D of len(s)", and a scalar
// Dense must stay rank 0.
func wrap[T tensor.Elem](s []T, shape []int) (*tensor.Tensor, error) {
	flat, err := tensor.FromSlice(s)
	if err != nil {
		return nil, fmt.Errorf("dense: %w", err)
	}
	t, err := flat.Reshape(shape...)
	if err != nil {
		return nil, fmt.Errorf("dense: Dense of shape %v holds %d elements: %w", shape, len(s), err)
	}
	return t, nil
}

// scalarBacking returns the backing slice of a scalar Dense of a dtype
// Plumb stores, or the element itself (which ToTensor then rejects).
func scalarBacking(d *gt.Dense) any {
	switch d.Dtype() {
	case gt.Float32:
		return d.Float32s()
	case gt.Float64:
		return d.Float64s()
	case gt.Int32:
		return d.Int32s()
	case gt.Int64:
		return d.Int64s()
	}
	return d.Data()
}
