package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// One matmul op run into outputs on operands whose shapes change between
// calls (and come back) derives the geometry for each call's shapes: its
// memo is used only for the shapes it was made for.
func TestMatMulForwardIntoFollowsShapes(t *testing.T) {
	op := MatMulOp(false, true)
	pairs := [][2]*tensor.Tensor{
		{randn(1, 4, 3), randn(2, 5, 3)},
		{randn(3, 2, 4, 3), randn(4, 5, 3)},
		{randn(5, 2, 1, 1, 6), randn(6, 3, 7, 6)},
		{randn(1, 4, 3), randn(2, 5, 3)},
	}
	for i, p := range pairs {
		want, err := op.Forward(ins(p[0], p[1]))
		require.NoError(t, err)
		out := tensor.Empty(want.DType(), want.Shape()...)
		require.NoError(t, op.(Into).ForwardInto(out, ins(p[0], p[1])), "pair %d", i)
		requireClose(t, want, out, 0, 0)
	}
	bad := tensor.Empty(tensor.Float64, 4, 4)
	require.ErrorContains(t, op.(Into).ForwardInto(bad, ins(pairs[0][0], pairs[0][1])), "want a host tensor float64[4 5]")
}
