package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/gradcheck"
	"github.com/plumbml/plumb/tensor"
)

// checkNetGradients checks, against central differences, the gradient
// Backward gives each input of net: net builds its output from one Var per
// tensor of in, on a fresh tape for every evaluation.
func checkNetGradients(t *testing.T, in []*tensor.Tensor, net func(vs []*Value) *Value) {
	t.Helper()
	build := func(tape *Tape, in []*tensor.Tensor) (*Value, []*Value) {
		vs := make([]*Value, len(in))
		for i, x := range in {
			vs[i] = tape.Var(x)
		}
		return net(vs), vs
	}
	fwd := func(in []*tensor.Tensor) (*tensor.Tensor, error) {
		y, _ := build(NewTape(), in)
		return y.Tensor()
	}
	bwd := func(in []*tensor.Tensor, _, gout *tensor.Tensor) ([]*tensor.Tensor, error) {
		tape := NewTape()
		y, vs := build(tape, in)
		if err := tape.BackwardWith(y, gout); err != nil {
			return nil, err
		}
		grads := make([]*tensor.Tensor, len(vs))
		for i, v := range vs {
			grads[i] = v.Grad()
		}
		return grads, nil
	}
	wrt := make([]int, len(in))
	for i := range wrt {
		wrt[i] = i
	}
	require.NoError(t, gradcheck.Check(fwd, bwd, in, wrt, gradcheck.Default))
}
