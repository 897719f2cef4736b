package run

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// broadcastInfer is the NumPy broadcast (the ONNX multidirectional
// broadcasting of docs/Broadcasting.md) of compile-time shapes, -1 for
// unknown dims: nil when a rank is unknown, an error when two known dims
// differ and neither is 1.
func broadcastInfer(shapes ...[]int) ([]int, error) {
	r := 0
	for _, s := range shapes {
		if s == nil {
			return nil, nil
		}
		r = max(r, len(s))
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for j, d := range s {
			k := r - len(s) + j
			switch o := out[k]; {
			case d == 1:
			case o == 1:
				out[k] = d
			case d < 0:
			case o < 0:
				out[k] = d
			case o != d:
				return nil, fmt.Errorf("dims %d and %d of axis %d do not broadcast", o, d, k)
			}
		}
	}
	return out, nil
}

// broadcastShapeOf is the broadcast shape of run-time tensors.
func broadcastShapeOf(ts ...*tensor.Tensor) ([]int, error) {
	shapes := make([][]int, len(ts))
	for i, t := range ts {
		shapes[i] = []int(t.Shape())
		if shapes[i] == nil {
			shapes[i] = []int{}
		}
	}
	return broadcastInfer(shapes...)
}

// bcastIndex maps each element of out (row-major) to the element of an
// input of shape in broadcast to it.
func bcastIndex(out, in []int) []int {
	n := size(out)
	idx := make([]int, n)
	r := len(out)
	strides := make([]int, r)
	st := 1
	for j := len(in) - 1; j >= 0; j-- {
		k := r - len(in) + j
		if in[j] != 1 {
			strides[k] = st
		}
		st *= in[j]
	}
	coord := make([]int, r)
	off := 0
	for i := range n {
		idx[i] = off
		for k := r - 1; k >= 0; k-- {
			coord[k]++
			off += strides[k]
			if coord[k] < out[k] {
				break
			}
			off -= strides[k] * coord[k]
			coord[k] = 0
		}
	}
	return idx
}

// expandAny broadcasts x of any dtype to shape (which must be a broadcast
// of x's shape).
func expandAny(x *tensor.Tensor, shape []int) (*tensor.Tensor, error) {
	out, err := tensor.New(x.DType(), shape...)
	if err != nil {
		return nil, err
	}
	idx := bcastIndex(shape, []int(x.Shape()))
	switch x.DType() {
	case tensor.Float32:
		gatherInto(out.Float32s(), x.Float32s(), idx)
	case tensor.Float64:
		gatherInto(out.Float64s(), x.Float64s(), idx)
	case tensor.Int32:
		gatherInto(out.Int32s(), x.Int32s(), idx)
	default:
		gatherInto(out.Int64s(), x.Int64s(), idx)
	}
	return out, nil
}

func gatherInto[T tensor.Elem](dst, src []T, idx []int) {
	for i, j := range idx {
		dst[i] = src[j]
	}
}

// newTensor makes a zeroed tensor of dt and shape, a scalar for no dims.
func newTensor(dt tensor.DType, shape []int) *tensor.Tensor {
	return tensor.Zeros(dt, shape...)
}

func errTooBig(shape []int) error {
	return fmt.Errorf("output shape %v has more than %d elements", shape, maxElems)
}
