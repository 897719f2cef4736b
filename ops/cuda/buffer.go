//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"gorgonia.org/cu"
)

// Buffer is a dense, contiguous, row-major tensor in a Device's memory, the
// device-side twin of *tensor.Tensor. Data moves between the two only
// through explicit copies (Upload, Download, CopyFrom, CopyTo), so a
// model's code shows where it pays for PCIe transfers. Free returns the
// memory to the device's cache; a Buffer must not be used after Free or
// after its Device is closed.
type Buffer struct {
	dev   *Device
	ptr   uintptr // 0 for an empty buffer and after Free
	dtype tensor.DType
	shape tensor.Shape
	gone  bool // Free has returned the memory
}

// DType returns the element type.
func (b *Buffer) DType() tensor.DType { return b.dtype }

// Shape returns the dims; the caller must not modify them.
func (b *Buffer) Shape() tensor.Shape { return b.shape }

// Size returns the number of elements.
func (b *Buffer) Size() int { return b.shape.Size() }

func (b *Buffer) bytes() int { return b.shape.Size() * b.dtype.Size() }

func (b *Buffer) String() string { return fmt.Sprintf("%v%v", b.dtype, b.shape) }

// newBuffer allocates an uninitialised buffer; called inside do.
func (d *Device) newBuffer(dt tensor.DType, shape tensor.Shape) (*Buffer, error) {
	b := &Buffer{dev: d, dtype: dt, shape: shape.Clone()}
	p, err := d.mem.Alloc(b.bytes())
	if err != nil {
		return nil, err
	}
	b.ptr = p
	return b, nil
}

// zero clears b; called inside do.
func (d *Device) zero(b *Buffer) error {
	if b.bytes() == 0 {
		return nil
	}
	if err := cu.MemsetD32Async(cu.DevicePtr(b.ptr), 0, int64(b.bytes()/4), d.stream); err != nil {
		return &Error{Call: "cuMemsetD32Async", Detail: fmt.Sprintf("%v at 0x%x", b, b.ptr), Err: err}
	}
	return nil
}

// Zeros returns a zero-filled buffer of the given dtype and shape.
func (d *Device) Zeros(dt tensor.DType, shape ...int) (*Buffer, error) {
	if dt.Size() == 0 {
		return nil, fmt.Errorf("cuda: invalid dtype %v", dt)
	}
	size := dt.Size()
	for _, n := range shape {
		if n < 0 || (n > 0 && size > math.MaxInt/n) {
			return nil, fmt.Errorf("cuda: invalid shape %v", shape)
		}
		size *= n
	}
	var b *Buffer
	err := d.do(func() error {
		var err error
		if b, err = d.newBuffer(dt, shape); err != nil {
			return err
		}
		return d.zero(b)
	})
	return b, err
}

// Upload copies t into a new buffer of its dtype and shape.
func (d *Device) Upload(t *tensor.Tensor) (*Buffer, error) {
	if t == nil {
		return nil, fmt.Errorf("cuda: Upload of a nil tensor")
	}
	var b *Buffer
	err := d.do(func() error {
		var err error
		if b, err = d.newBuffer(t.DType(), t.Shape()); err != nil {
			return err
		}
		return d.copyHtoD(b, t)
	})
	return b, err
}

// Download copies b into a new host tensor.
func (b *Buffer) Download() (*tensor.Tensor, error) {
	t, err := tensor.New(b.dtype, b.shape...)
	if err != nil {
		return nil, err
	}
	return t, b.CopyTo(t)
}

// CopyFrom copies the host tensor t, of b's dtype and size, into b.
func (b *Buffer) CopyFrom(t *tensor.Tensor) error {
	if err := b.matches(t, "CopyFrom"); err != nil {
		return err
	}
	return b.dev.do(func() error { return b.dev.copyHtoD(b, t) })
}

// CopyTo copies b into the host tensor t, of b's dtype and size.
func (b *Buffer) CopyTo(t *tensor.Tensor) error {
	if err := b.matches(t, "CopyTo"); err != nil {
		return err
	}
	return b.dev.do(func() error {
		if b.bytes() == 0 {
			return nil
		}
		err := cu.MemcpyDtoHAsync(hostPtr(t), cu.DevicePtr(b.ptr), int64(b.bytes()), b.dev.stream)
		runtime.KeepAlive(t)
		if err != nil {
			return &Error{Call: "cuMemcpyDtoHAsync", Detail: fmt.Sprintf("%v from 0x%x", b, b.ptr), Err: err}
		}
		return nil
	})
}

// matches checks that t fits b for a copy.
func (b *Buffer) matches(t *tensor.Tensor, what string) error {
	switch {
	case t == nil:
		return fmt.Errorf("cuda: %s with a nil tensor", what)
	case b.freed():
		return fmt.Errorf("cuda: %s on a freed buffer %v", what, b)
	case t.DType() != b.dtype || t.Size() != b.Size():
		return fmt.Errorf("cuda: %s between tensor %v%v and buffer %v", what, t.DType(), t.Shape(), b)
	}
	return nil
}

// copyHtoD copies t into b, which fits it; called inside do. The copy is
// queued on the stream, and for pageable host memory the driver stages t
// before returning, so t may change as soon as do returns.
func (d *Device) copyHtoD(b *Buffer, t *tensor.Tensor) error {
	if b.bytes() == 0 {
		return nil
	}
	err := cu.MemcpyHtoDAsync(cu.DevicePtr(b.ptr), hostPtr(t), int64(b.bytes()), d.stream)
	runtime.KeepAlive(t)
	if err != nil {
		return &Error{Call: "cuMemcpyHtoDAsync", Detail: fmt.Sprintf("%v to 0x%x", b, b.ptr), Err: err}
	}
	return nil
}

// hostPtr returns the address of t's first element; t is not empty.
func hostPtr(t *tensor.Tensor) unsafe.Pointer {
	switch s := t.Raw().(type) {
	case []float32:
		return unsafe.Pointer(&s[0])
	case []float64:
		return unsafe.Pointer(&s[0])
	case []int32:
		return unsafe.Pointer(&s[0])
	case []int64:
		return unsafe.Pointer(&s[0])
	}
	panic(fmt.Sprintf("cuda: tensor of dtype %v", t.DType()))
}

// freed reports whether Free has returned b's memory.
func (b *Buffer) freed() bool { return b.gone }

// Free returns b's memory to its device's cache. Freeing a nil buffer, or
// one twice, does nothing.
func (b *Buffer) Free() error {
	if b == nil || b.gone {
		return nil
	}
	err := b.dev.mem.Free(b.ptr)
	b.ptr, b.gone = 0, true
	return err
}

// freeAll frees every non-nil buffer: the saved state of an op, or the
// outputs of a call that failed. Free of a live buffer cannot fail.
func freeAll(bs ...*Buffer) {
	for _, b := range bs {
		b.Free()
	}
}

// done returns out, or frees it and returns only err when the call failed.
func done(out *Buffer, err error) (*Buffer, error) {
	if err != nil {
		freeAll(out)
		return nil, err
	}
	return out, nil
}

// opError is ops' *Error for a GPU op: it names the op, the inputs' dtypes
// and shapes, and what was expected.
func opError(op string, in []*Buffer, format string, args ...any) error {
	e := &ops.Error{Op: op, Msg: fmt.Sprintf(format, args...)}
	for _, b := range in {
		if b == nil {
			e.Shapes = append(e.Shapes, "nil")
			continue
		}
		e.Shapes = append(e.Shapes, b.String())
	}
	return e
}

// checkInputs checks that every input is a live float32 buffer of d, the
// only dtype the kernels compute in.
func (d *Device) checkInputs(op string, in ...*Buffer) error {
	for _, b := range in {
		switch {
		case b == nil:
			return opError(op, in, "nil input")
		case b.dev != d:
			return opError(op, in, "input %v belongs to another device", b)
		case b.freed():
			return opError(op, in, "input %v was freed", b)
		case b.dtype != tensor.Float32:
			return opError(op, in, "the CUDA kernels take float32 inputs only")
		}
	}
	return nil
}

// Launch shapes. Element-wise kernels loop over their range with a grid
// stride, so the grid is capped; row kernels run a block per row.
const (
	blockSize = 256
	maxBlocks = 1 << 15
)

// grid1 is the grid of an element-wise kernel over n items.
func grid1(n int) [3]int { return [3]int{max(1, min((n+blockSize-1)/blockSize, maxBlocks)), 1, 1} }

// block1 is a one-dimensional block of blockSize threads.
var block1 = [3]int{blockSize, 1, 1}

// rowBlock is the block of a row kernel over rows of n elements: a
// multiple of 32 up to blockSize, so short rows do not idle most threads.
func rowBlock(n int) [3]int { return [3]int{min(blockSize, max(32, (n+31)/32*32)), 1, 1} }

// rowGrid is the grid of a row kernel over rows rows.
func rowGrid(rows int) [3]int { return [3]int{max(1, min(rows, maxBlocks)), 1, 1} }

// Kernel parameters, each 8 bytes.
func ptr(b *Buffer) uint64 {
	if b == nil {
		return 0
	}
	return uint64(b.ptr)
}
func i64(v int) uint64     { return uint64(int64(v)) }
func f64(v float64) uint64 { return math.Float64bits(v) }
func flag(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
