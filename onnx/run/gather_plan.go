package run

import (
	"errors"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// gatherOp is ONNX Gather on float data as an op of a plan (an embedding
// lookup is Gather of a weight matrix along axis 0): for each index j
// along axis, negative ones counted from the end (ONNX Operators.md,
// Gather-13), the block of data at j copied into the plan's arena
// (ops.Into). ops' gather has neither ForwardInto nor attributes a plan
// could rebuild it from.
type gatherOp struct{ axis int }

func (o *gatherOp) Name() string { return "gather" }

func (o *gatherOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New("gather: an inference plan's op has no gradient")
}

// geom checks data (float, host) and indices (int32 or int64) and returns
// the output's shape and the sizes of the copy.
func (o *gatherOp) geom(in []*tensor.Tensor) (shape []int, outer, n, inner int, err error) {
	if len(in) != 2 || in[0] == nil || in[1] == nil || in[0].Storage() != nil || in[1].Storage() != nil {
		return nil, 0, 0, 0, ops.Errorf("gather", in, "want data and indices in host memory")
	}
	x, ind := in[0], in[1]
	if !x.DType().IsFloat() || ind.DType().IsFloat() || o.axis < 0 || o.axis >= x.Rank() {
		return nil, 0, 0, 0, ops.Errorf("gather", in, "want float data of rank above axis %d and int indices", o.axis)
	}
	s := []int(x.Shape())
	shape = append(append(append([]int{}, s[:o.axis]...), []int(ind.Shape())...), s[o.axis+1:]...)
	return shape, size(s[:o.axis]), s[o.axis], size(s[o.axis+1:]), nil
}

func (o *gatherOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	shape, _, _, _, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	y := tensor.Empty(in[0].DType(), shape...)
	return y, o.ForwardInto(y, in)
}

// ForwardInto is the op's ops.Into.
func (o *gatherOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	shape, outer, n, inner, err := o.geom(in)
	if err != nil {
		return err
	}
	if out == nil || out.DType() != in[0].DType() || !out.Shape().Equal(tensor.Shape(shape)) || out.Storage() != nil {
		return ops.Errorf("gather", in, "want a host output %v%v", in[0].DType(), shape)
	}
	ind := in[1]
	k := ind.Size()
	for i := range k {
		if j := intAt(ind, i); j < -int64(n) || j >= int64(n) {
			return ops.Errorf("gather", in, "index %d is out of range for axis %d of size %d; expected -%d to %d", j, o.axis, n, n, n-1)
		}
	}
	switch out.DType() {
	case tensor.Float32:
		gatherBlocks(out.Float32s(), in[0].Float32s(), ind, outer, n, inner)
	case tensor.Float64:
		gatherBlocks(out.Float64s(), in[0].Float64s(), ind, outer, n, inner)
	}
	return nil
}

// gatherBlocks copies, for each of outer blocks of x (n rows of inner
// elements each), the rows the indices name into y; the indices were
// checked.
func gatherBlocks[T float32 | float64](y, x []T, ind *tensor.Tensor, outer, n, inner int) {
	k := ind.Size()
	for b := range outer {
		for i := range k {
			j := int(intAt(ind, i))
			if j < 0 {
				j += n
			}
			copy(y[(b*k+i)*inner:][:inner], x[(b*n+j)*inner:][:inner])
		}
	}
}
