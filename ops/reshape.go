package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "reshape", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a ReshapeAttrs) Op { return ReshapeOp(a.Shape...) }), CUDA: DeviceLayout})
}

// ReshapeAttrs are reshape's attributes: the new shape, with at most one -1.
type ReshapeAttrs struct {
	Shape []int `json:"shape"`
}

type reshapeOp struct{ shape []int }

// ReshapeOp returns the op that gives x a new shape with the same elements
// in the same row-major order (tf.reshape); one dim may be -1 and is
// inferred. The output is a view sharing x's storage (tensor.Reshape), and
// the gradient is the upstream gradient reshaped back to x's shape. Any
// dtype may be reshaped; only float inputs have gradients.
func ReshapeOp(shape ...int) Op { return &reshapeOp{shape: slices.Clone(shape)} }

// Reshape returns x with a new shape; see ReshapeOp.
func Reshape(x *tensor.Tensor, shape ...int) (*tensor.Tensor, error) {
	return run(ReshapeOp(shape...), x)
}

func (o *reshapeOp) Name() string { return "reshape" }

// Check is reshape's device-free check (Checker): one input whose size
// the new shape holds (a view of a device tensor reads no data).
func (o *reshapeOp) Check(in []*tensor.Tensor) error {
	if err := checkCount("reshape", in, 1); err != nil {
		return err
	}
	if _, err := in[0].Reshape(o.shape...); err != nil {
		return Errorf("reshape", in, "%v", err)
	}
	return nil
}

func (o *reshapeOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("reshape", in, 1); err != nil {
		return nil, err
	}
	y, err := in[0].Reshape(o.shape...)
	if err != nil {
		return nil, Errorf("reshape", in, "%v", err)
	}
	return y, nil
}

func (o *reshapeOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g, err := gout.Reshape(in[0].Shape()...)
	return []*tensor.Tensor{g}, err
}
