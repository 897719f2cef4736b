package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// Each mk builds the op with an RNG of the same seed, so every evaluation
// of the check draws the same mask.
var _ = addGradCases("dropout",
	gradCase{name: "rate0.4", attrs: Attrs{Rate: 0.4, Seed: 61}, in: ins(randn(62, 4, 5)), wrt: []int{0}},
	gradCase{name: "rate0", attrs: Attrs{Rate: 0}, in: ins(randn(63, 3)), wrt: []int{0}},
)

func TestDropoutForwardAndBackwardUseTheDrawnMask(t *testing.T) {
	const rate = 0.3
	x := randn(64, 6, 7)
	op := DropoutOp(rate, tensor.NewRNG(65))
	y, err := op.Forward(ins(x))
	require.NoError(t, err)
	gout := randn(66, 6, 7)
	g, err := op.Backward(ins(x), y, gout, []bool{true})
	require.NoError(t, err)
	// The contract: element i is kept iff the i-th draw is >= rate.
	rng := tensor.NewRNG(65)
	for i := range x.Size() {
		if rng.Float64() >= rate {
			require.InDelta(t, x.At(i)/(1-rate), y.At(i), 1e-15)
			require.InDelta(t, gout.At(i)/(1-rate), g[0].At(i), 1e-15)
		} else {
			require.Zero(t, y.At(i))
			require.Zero(t, g[0].At(i))
		}
	}
	checkDTypes(t, func() Op { return DropoutOp(rate, tensor.NewRNG(65)) }, x)
}

func TestDropoutDropsAboutRate(t *testing.T) {
	x, err := tensor.Ones(tensor.Float32, 100, 100)
	require.NoError(t, err)
	y, err := Dropout(x, 0.25, tensor.NewRNG(67))
	require.NoError(t, err)
	zeros, sum := 0, 0.0
	for _, v := range y.Float32s() {
		if v == 0 {
			zeros++
		}
		sum += float64(v)
	}
	require.InDelta(t, 0.25, float64(zeros)/1e4, 0.02)
	require.InDelta(t, 1, sum/1e4, 0.03, "inverted dropout keeps the expectation")
}

func TestDropoutRateZeroIsIdentity(t *testing.T) {
	x := tensor.MustFromSlice([]float32{1.5, -2, math.MaxFloat32}, 3)
	y, err := Dropout(x, 0, nil)
	require.NoError(t, err)
	require.Equal(t, x.Float32s(), y.Float32s())
}

func TestDropoutErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 2)
	for _, rate := range []float64{1, -0.1, 1.5, math.NaN()} {
		_, err := Dropout(x, rate, tensor.NewRNG(1))
		require.ErrorContains(t, err, "dropout: inputs float32[2 2]")
		require.ErrorContains(t, err, "outside [0, 1)")
	}
	_, err := Dropout(x, 0.5, nil)
	require.ErrorContains(t, err, "needs a random generator")
	_, err = Dropout(tensor.Zeros(tensor.Int64, 2), 0.5, tensor.NewRNG(1))
	require.ErrorContains(t, err, "dropout: inputs int64[2]")
}
