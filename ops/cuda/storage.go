//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/tensor"
	"gorgonia.org/cu"
)

// String names the device as tensors and errors do, "cuda:0".
func (d *Device) String() string { return fmt.Sprintf("cuda:%d", d.ordinal) }

// Kind is "cuda", the key of this package's kernels in ops' registry.
func (d *Device) Kind() string { return "cuda" }

// Alloc returns uninitialised device storage for a tensor of dt and shape,
// from the caching allocator (tensor.Device).
func (d *Device) Alloc(dt tensor.DType, shape tensor.Shape) (tensor.DeviceStorage, error) {
	if dt.Size() == 0 {
		return nil, fmt.Errorf("cuda: invalid dtype %v", dt)
	}
	var b *Buffer
	err := d.do(func() error {
		var err error
		b, err = d.newBuffer(dt, shape)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &storage{b}, nil
}

// storage is a Buffer as a tensor's device storage (tensor.DeviceStorage).
// A tensor's shape may differ from the buffer's (a Reshape view); kernels
// see the tensor's shape through view.
type storage struct{ b *Buffer }

func (s *storage) Device() tensor.Device { return s.b.dev }

func (s *storage) Span() (lo, hi uintptr) {
	if s.b.ptr == 0 {
		return 0, 0
	}
	return s.b.ptr, s.b.ptr + uintptr(s.b.bytes())
}

func (s *storage) Upload(src *tensor.Tensor) error   { return s.b.CopyFrom(src) }
func (s *storage) Download(dst *tensor.Tensor) error { return s.b.CopyTo(dst) }

func (s *storage) CopyFrom(src tensor.DeviceStorage) error {
	from, ok := src.(*storage)
	switch {
	case !ok || from.b.dev != s.b.dev:
		return fmt.Errorf("cuda: copy into %v from storage of another device", s.b.dev)
	case from.b.bytes() != s.b.bytes() || from.b.dtype != s.b.dtype:
		return fmt.Errorf("cuda: copy of %v into %v", from.b, s.b)
	case from.b.freed() || s.b.freed():
		return fmt.Errorf("cuda: copy of %v into %v: a freed buffer", from.b, s.b)
	}
	return s.b.dev.do(func() error { return s.b.dev.copyDtoD(s.b, from.b) })
}

// copyDtoD copies src into dst of the same size; called inside do.
func (d *Device) copyDtoD(dst, src *Buffer) error {
	if dst.bytes() == 0 {
		return nil
	}
	if err := cu.MemcpyDtoDAsync(cu.DevicePtr(dst.ptr), cu.DevicePtr(src.ptr), int64(dst.bytes()), d.stream); err != nil {
		return &Error{Call: "cuMemcpyDtoDAsync", Detail: fmt.Sprintf("%v from 0x%x to 0x%x", dst, src.ptr, dst.ptr), Err: err}
	}
	return nil
}

// Fill sets every element to v: zero for any dtype, other values for
// float32 (the dtype the kernels compute in).
func (s *storage) Fill(v float64) error {
	switch {
	case s.b.freed():
		return fmt.Errorf("cuda: Fill of a freed buffer %v", s.b)
	case v == 0:
		return s.b.dev.do(func() error { return s.b.dev.zero(s.b) })
	case s.b.dtype != tensor.Float32:
		return fmt.Errorf("cuda: Fill of a %v buffer with %v; only float32 buffers are filled with non-zero values", s.b.dtype, v)
	}
	return s.b.dev.do(func() error { return s.b.dev.fill(s.b, float32(v)) })
}

func (s *storage) Clone() (tensor.DeviceStorage, error) {
	d := s.b.dev
	c, err := d.Alloc(s.b.dtype, s.b.shape)
	if err != nil {
		return nil, err
	}
	if err := c.CopyFrom(s); err != nil {
		c.Free()
		return nil, err
	}
	return c, nil
}

func (s *storage) Free() { s.b.Free() }

// view returns the device buffer of the tensor t with t's own shape (the
// storage's buffer, or a view of it for a Reshape), nil for a nil t. A
// view shares the memory and must not be freed.
func view(t *tensor.Tensor) *Buffer {
	if t == nil {
		return nil
	}
	s, ok := t.Storage().(*storage)
	if !ok {
		return nil
	}
	if s.b.shape.Equal(t.Shape()) {
		return s.b
	}
	return &Buffer{dev: s.b.dev, ptr: s.b.ptr, dtype: t.DType(), shape: t.Shape(), gone: s.b.gone}
}

// wrap returns the buffer b, which a kernel allocated, as a tensor on the
// device that owns it; nil for a nil b.
func wrap(b *Buffer) *tensor.Tensor {
	if b == nil {
		return nil
	}
	return tensor.OnDevice(b.dtype, b.shape, &storage{b})
}

// Tensor returns b as a tensor on its device, taking ownership of b: a
// tape's Release frees it. It is how code that made a Buffer directly
// hands it to graph.
func (b *Buffer) Tensor() *tensor.Tensor { return wrap(b) }

// fill sets every float32 element of b to v; called inside do.
func (d *Device) fill(b *Buffer, v float32) error {
	if b.bytes() == 0 {
		return nil
	}
	if err := cu.MemsetD32Async(cu.DevicePtr(b.ptr), uint(math.Float32bits(v)), int64(b.Size()), d.stream); err != nil {
		return &Error{Call: "cuMemsetD32Async", Detail: fmt.Sprintf("%v at 0x%x", b, b.ptr), Err: err}
	}
	return nil
}
