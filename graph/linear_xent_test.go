package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The fused loss gives the gradients of Linear then SoftmaxCrossEntropy.
func TestLinearSoftmaxCrossEntropyMatchesComposition(t *testing.T) {
	rng := tensor.NewRNG(4)
	mk := func(shape ...int) *tensor.Tensor {
		x, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, shape...)
		require.NoError(t, err)
		return x
	}
	x, w, b := NewParam("x", mk(4, 3)), NewParam("w", mk(3, 5)), NewParam("b", mk(5))
	labels := tensor.MustFromSlice([]int64{4, 0, 2, 1}, 4)
	grads := func(loss func(t *Tape) *Value) []*tensor.Tensor {
		for _, p := range []*Param{x, w, b} {
			p.Grad = nil
		}
		tape := NewTape()
		require.NoError(t, tape.Backward(loss(tape)))
		return []*tensor.Tensor{x.Grad, w.Grad, b.Grad}
	}
	fused := grads(func(t *Tape) *Value { return LinearSoftmaxCrossEntropy(t.Param(x), t.Param(w), t.Param(b), labels) })
	plain := grads(func(t *Tape) *Value { return SoftmaxCrossEntropy(Linear(t.Param(x), t.Param(w), t.Param(b)), labels) })
	for i := range fused {
		for j := range fused[i].Size() {
			require.InDelta(t, plain[i].At(j), fused[i].At(j), 1e-12)
		}
	}
	require.ErrorContains(t, NewTape().Backward(LinearSoftmaxCrossEntropy(NewTape().Const(x.Value), NewTape().Const(w.Value), NewTape().Const(b.Value), nil)), "linear_softmax_cross_entropy")
}
