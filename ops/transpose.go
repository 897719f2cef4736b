package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "transpose", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a TransposeAttrs) Op { return TransposeOp(a.Perm...) }), CUDA: DeviceFallback})
}

// TransposeAttrs are transpose's attributes: the permutation of the axes.
type TransposeAttrs struct {
	Perm []int `json:"perm"`
}

type transposeOp struct{ perm []int }

// TransposeOp returns the op that permutes x's axes: output axis i is input
// axis perm[i]; with no perm the axes are reversed (tf.transpose). The
// output is a contiguous copy (tensor.Transpose), and the gradient is the
// upstream gradient transposed by the inverse permutation.
func TransposeOp(perm ...int) Op { return &transposeOp{perm: slices.Clone(perm)} }

// Transpose returns x with its axes permuted; see TransposeOp.
func Transpose(x *tensor.Tensor, perm ...int) (*tensor.Tensor, error) {
	return run(TransposeOp(perm...), x)
}

func (o *transposeOp) Name() string { return "transpose" }

// Attrs returns the op's TransposeAttrs (Attributed), so a compiled plan
// can rebuild it or read its permutation.
func (o *transposeOp) Attrs() any { return TransposeAttrs{Perm: slices.Clone(o.perm)} }

func (o *transposeOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("transpose", in, 1); err != nil {
		return nil, err
	}
	y, err := in[0].Transpose(o.perm...)
	if err != nil {
		return nil, Errorf("transpose", in, "%v", err)
	}
	return y, nil
}

func (o *transposeOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	inv := make([]int, len(o.perm)) // empty: reversal is its own inverse
	for i, p := range o.perm {
		inv[p] = i
	}
	g, err := gout.Transpose(inv...)
	return []*tensor.Tensor{g}, err
}
