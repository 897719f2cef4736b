package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "slice", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SliceAttrs) Op { return SliceOp(a.Axis, a.Begin, a.End) }), CUDA: DeviceFallback})
}

// SliceAttrs are slice's attributes: the axis and the range [Begin, End).
type SliceAttrs struct {
	Axis  int `json:"axis"`
	Begin int `json:"begin"`
	End   int `json:"end"`
}

type sliceOp struct{ axis, from, to int }

// SliceOp returns the op that keeps indices [from, to) of x along axis, all
// of every other axis (tf.slice with begin from and size to-from on that
// axis; 0 <= from <= to <= x.shape[axis]). The output is a copy
// (tensor.Slice); the gradient is the upstream gradient padded with zeros
// back to x's shape.
func SliceOp(axis, from, to int) Op { return &sliceOp{axis: axis, from: from, to: to} }

// Slice returns x restricted to [from, to) along axis; see SliceOp.
func Slice(x *tensor.Tensor, axis, from, to int) (*tensor.Tensor, error) {
	return run(SliceOp(axis, from, to), x)
}

func (o *sliceOp) Name() string { return "slice" }

func (o *sliceOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("slice", in, 1); err != nil {
		return nil, err
	}
	y, err := in[0].Slice(o.axis, o.from, o.to)
	if err != nil {
		return nil, Errorf("slice", in, "%v", err)
	}
	return y, nil
}

// Backward concatenates zeros before and after the upstream gradient.
func (o *sliceOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	x := in[0]
	ax, err := tensor.Axis(o.axis, x.Rank())
	if err != nil {
		return nil, err
	}
	before, after := x.Shape().Clone(), x.Shape().Clone()
	before[ax], after[ax] = o.from, x.Dim(ax)-o.to
	g, err := tensor.Concat(ax, tensor.Zeros(gout.DType(), before...), gout, tensor.Zeros(gout.DType(), after...))
	return []*tensor.Tensor{g}, err
}
