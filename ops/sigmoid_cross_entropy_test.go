package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("sigmoid_cross_entropy",
	gradCase{name: "mean", attrs: Attrs{Reduction: LossMean}, in: ins(randn(41, 3, 4), randu(42, 0, 1, 3, 4)), wrt: []int{0, 1}},
	gradCase{name: "sum", attrs: Attrs{Reduction: LossSum}, in: ins(randn(43, 5), randu(44, 0, 1, 5)), wrt: []int{0, 1}},
	gradCase{name: "none", attrs: Attrs{Reduction: LossNone}, in: ins(randn(45, 2, 3), randu(46, 0, 1, 2, 3)), wrt: []int{0, 1}},
)

// plainSigmoidXent is the textbook -z·log(σ(x)) - (1-z)·log(1-σ(x)).
func plainSigmoidXent(x, z float64) float64 {
	s := 1 / (1 + math.Exp(-x))
	return -z*math.Log(s) - (1-z)*math.Log(1-s)
}

func TestSigmoidCrossEntropyForward(t *testing.T) {
	x, z := randn(47, 2, 3), randu(48, 0, 1, 2, 3)
	per := make([]float64, 6)
	for i := range per {
		per[i] = plainSigmoidXent(x.At(i), z.At(i))
	}
	checkLossReductions(t, SigmoidCrossEntropyOp, per, []int{2, 3}, x, z)
}

func TestSigmoidCrossEntropyLargeLogitsStayFinite(t *testing.T) {
	// The textbook form takes log(0) here; the stable form gives |x|.
	x := tensor.MustFromSlice([]float32{100, -100, 100, -100}, 4)
	z := tensor.MustFromSlice([]float32{0, 1, 1, 0}, 4)
	got, err := SigmoidCrossEntropy(x, z, LossNone)
	require.NoError(t, err)
	requireClose(t, tensor.MustFromSlice([]float64{100, 100, 0, 0}, 4), got, 1e-6, 1e-6)
}

func TestSigmoidCrossEntropyGradFormula(t *testing.T) {
	x := tensor.MustFromSlice([]float64{-2, 0.5}, 2)
	z := tensor.MustFromSlice([]float64{1, 0.25}, 2)
	op := SigmoidCrossEntropyOp(LossNone)
	y, err := op.Forward(ins(x, z))
	require.NoError(t, err)
	g, err := op.Backward(ins(x, z), y, tensor.MustFromSlice([]float64{1, 3}, 2), []bool{true, true})
	require.NoError(t, err)
	s := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	requireClose(t, tensor.MustFromSlice([]float64{s(-2) - 1, 3 * (s(0.5) - 0.25)}, 2), g[0], 1e-15, 1e-12)
	requireClose(t, tensor.MustFromSlice([]float64{2, -1.5}, 2), g[1], 1e-15, 1e-12)
}

func TestSigmoidCrossEntropyErrors(t *testing.T) {
	_, err := SigmoidCrossEntropy(tensor.Zeros(tensor.Float32, 2, 3), tensor.Zeros(tensor.Float32, 3, 2), LossMean)
	require.ErrorContains(t, err, "sigmoid_cross_entropy: inputs float32[2 3], float32[3 2]: want inputs of one shape")
	_, err = SigmoidCrossEntropy(tensor.Zeros(tensor.Float32, 2), tensor.Zeros(tensor.Int32, 2), LossMean)
	require.ErrorContains(t, err, "sigmoid_cross_entropy: inputs float32[2], int32[2]")
	_, err = SigmoidCrossEntropy(tensor.Zeros(tensor.Float32, 2), tensor.Zeros(tensor.Float32, 2), LossReduction(-1))
	require.ErrorContains(t, err, "unknown reduction")
}
