package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("mse",
	gradCase{name: "mean", attrs: Attrs{Reduction: LossMean}, in: ins(randn(51, 3, 4), randn(52, 3, 4)), wrt: []int{0, 1}},
	gradCase{name: "sum", attrs: Attrs{Reduction: LossSum}, in: ins(randn(53, 5), randn(54, 5)), wrt: []int{0, 1}},
	gradCase{name: "none", attrs: Attrs{Reduction: LossNone}, in: ins(randn(55, 2, 3), randn(56, 2, 3)), wrt: []int{0, 1}},
)

func TestMSEForward(t *testing.T) {
	p := tensor.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2)
	q := tensor.MustFromSlice([]float64{0, 2, 5, 3.5}, 2, 2)
	checkLossReductions(t, MSEOp, []float64{1, 0, 4, 0.25}, []int{2, 2}, p, q)
}

func TestMSEGradFormula(t *testing.T) {
	p := tensor.MustFromSlice([]float64{1, 2}, 2)
	q := tensor.MustFromSlice([]float64{3, 1.5}, 2)
	op := MSEOp(LossMean)
	y, err := op.Forward(ins(p, q))
	require.NoError(t, err)
	g, err := op.Backward(ins(p, q), y, tensor.Scalar(1.0), []bool{true, true})
	require.NoError(t, err)
	// d/dp mean((p-q)²) = 2(p-q)/n.
	require.Equal(t, []float64{-2, 0.5}, g[0].Float64s())
	require.Equal(t, []float64{2, -0.5}, g[1].Float64s())
}

func TestMSEErrors(t *testing.T) {
	_, err := MSE(tensor.Zeros(tensor.Float64, 4), tensor.Zeros(tensor.Float64, 4, 1), LossMean)
	require.ErrorContains(t, err, "mse: inputs float64[4], float64[4 1]: want inputs of one shape")
	_, err = MSE(tensor.Zeros(tensor.Float64, 4), tensor.Zeros(tensor.Float32, 4), LossMean)
	require.ErrorContains(t, err, "mse: inputs float64[4], float32[4]")
}
