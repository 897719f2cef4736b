package run

import (
	"errors"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// permuteOp is ONNX Transpose on float data as an op of a plan: out's
// axis i is x's axis perm[i] (numpy.transpose), written into the plan's
// arena (ops.Into); ops' transpose has neither ForwardInto nor
// attributes a plan could rebuild it from. The copy walks out in order
// with an odometer over its index, reading x through permuted strides.
type permuteOp struct{ perm []int }

func (o *permuteOp) Name() string { return "transpose" }

func (o *permuteOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New("transpose: an inference plan's op has no gradient")
}

// shape checks x against the permutation and returns out's shape.
func (o *permuteOp) shape(in []*tensor.Tensor) ([]int, error) {
	if len(in) != 1 || in[0] == nil || in[0].Storage() != nil || !in[0].DType().IsFloat() || in[0].Rank() != len(o.perm) {
		return nil, ops.Errorf("transpose", in, "want one float input of rank %d in host memory", len(o.perm))
	}
	s := make([]int, len(o.perm))
	for i, a := range o.perm {
		s[i] = in[0].Dim(a)
	}
	return s, nil
}

func (o *permuteOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	s, err := o.shape(in)
	if err != nil {
		return nil, err
	}
	y := tensor.Empty(in[0].DType(), s...)
	return y, o.ForwardInto(y, in)
}

// ForwardInto is the op's ops.Into.
func (o *permuteOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	s, err := o.shape(in)
	if err != nil {
		return err
	}
	if out == nil || out.DType() != in[0].DType() || !out.Shape().Equal(tensor.Shape(s)) || out.Storage() != nil {
		return ops.Errorf("transpose", in, "want a host output %v%v", in[0].DType(), s)
	}
	// stride[i]: the step in x of out's axis i.
	xs := in[0].Shape()
	xstride := make([]int, len(xs))
	for i, st := len(xs)-1, 1; i >= 0; i-- {
		xstride[i] = st
		st *= xs[i]
	}
	stride := make([]int, len(s))
	for i, a := range o.perm {
		stride[i] = xstride[a]
	}
	switch out.DType() {
	case tensor.Float32:
		permute(out.Float32s(), in[0].Float32s(), s, stride)
	case tensor.Float64:
		permute(out.Float64s(), in[0].Float64s(), s, stride)
	}
	return nil
}

// permute writes y (of shape s, row-major) from x read at the strides of
// y's axes.
func permute[T float32 | float64](y, x []T, s, stride []int) {
	idx := make([]int, len(s))
	at := 0
	for k := range y {
		y[k] = x[at]
		for i := len(s) - 1; i >= 0; i-- {
			idx[i]++
			at += stride[i]
			if idx[i] < s[i] {
				break
			}
			at -= idx[i] * stride[i]
			idx[i] = 0
		}
	}
}
