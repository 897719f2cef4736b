package ops

import (
	"github.com/plumbml/plumb/tensor"
)

// concat takes any number of inputs; its one input name stands for all of
// them, and every input is differentiable.
func init() {
	register(Spec{Name: "concat", Inputs: []string{"xs..."}, Grads: []int{0},
		Make: MakeOp(func(a ConcatAttrs) Op { return ConcatOp(a.Axis) }), CUDA: DeviceFallback})
}

// ConcatAttrs are concat's attributes: the axis it joins along.
type ConcatAttrs struct {
	Axis int `json:"axis"`
}

type concatOp struct{ axis int }

// ConcatOp returns the op that joins its inputs, of one dtype and equal
// dims except along axis, end to end along axis (tf.concat). The gradient
// of each input is its slice of the upstream gradient.
func ConcatOp(axis int) Op { return &concatOp{axis: axis} }

// Concat joins xs along axis; see ConcatOp.
func Concat(axis int, xs ...*tensor.Tensor) (*tensor.Tensor, error) {
	return run(ConcatOp(axis), xs...)
}

func (o *concatOp) Name() string { return "concat" }

func (o *concatOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) == 0 {
		return nil, Errorf("concat", in, "want at least one input")
	}
	if err := checkArity("concat", in, len(in)); err != nil {
		return nil, err
	}
	y, err := tensor.Concat(o.axis, in...)
	if err != nil {
		return nil, Errorf("concat", in, "%v", err)
	}
	return y, nil
}

func (o *concatOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	ax, err := tensor.Axis(o.axis, out.Rank())
	if err != nil {
		return nil, err
	}
	grads := make([]*tensor.Tensor, len(in))
	from := 0
	for i, x := range in {
		to := from + x.Dim(ax)
		if need[i] {
			if grads[i], err = gout.Slice(ax, from, to); err != nil {
				return nil, err
			}
		}
		from = to
	}
	return grads, nil
}
