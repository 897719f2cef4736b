package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func bnAttrs(training bool) BatchNormAttrs {
	return BatchNormAttrs{Momentum: DefaultBatchNormMomentum, Epsilon: DefaultBatchNormEpsilon, Training: training}
}

// bnBuildAttrs is bnAttrs as Build's attributes.
func bnBuildAttrs(training bool) Attrs {
	return Attrs{Momentum: DefaultBatchNormMomentum, Epsilon: DefaultBatchNormEpsilon, Training: training}
}

// bnInputs returns x, gamma, beta and positive moving statistics for c
// channels; the moving statistics are fresh tensors, as training updates them.
func bnInputs(seed uint64, c int, xShape ...int) []*tensor.Tensor {
	return ins(randn(seed, xShape...), randu(seed+1, 0.5, 2, c), randn(seed+2, c), randn(seed+3, c), randu(seed+4, 0.5, 2, c))
}

var _ = addGradCases("batch_norm",
	gradCase{name: "nchw/training", attrs: bnBuildAttrs(true), in: bnInputs(71, 2, 3, 2, 2, 3), wrt: []int{0, 1, 2}},
	gradCase{name: "nc/training", attrs: bnBuildAttrs(true), in: bnInputs(76, 3, 5, 3), wrt: []int{0, 1, 2}},
	gradCase{name: "nchw/inference", attrs: bnBuildAttrs(false), in: bnInputs(81, 2, 3, 2, 2, 3), wrt: []int{0, 1, 2}},
	gradCase{name: "nc/inference", attrs: bnBuildAttrs(false), in: bnInputs(86, 3, 5, 3), wrt: []int{0, 1, 2}},
)

func TestBatchNormDefaultsAreKeras(t *testing.T) {
	require.Equal(t, 0.99, DefaultBatchNormMomentum)
	require.Equal(t, 1e-3, DefaultBatchNormEpsilon)
}

// channelStats returns the mean and biased variance of channel ch of x,
// laid out [n, c, hw].
func channelStats(x *tensor.Tensor, ch int) (mean, variance float64) {
	n, c, hw := x.Dim(0), x.Dim(1), x.Size()/(x.Dim(0)*x.Dim(1))
	var vals []float64
	for b := range n {
		for j := range hw {
			vals = append(vals, x.At((b*c+ch)*hw+j))
		}
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	for _, v := range vals {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(vals))
}

func TestBatchNormTraining(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape []int
	}{{"nchw", []int{4, 3, 2, 5}}, {"nc", []int{16, 3}}} {
		t.Run(c.name, func(t *testing.T) {
			in := bnInputs(91, 3, c.shape...)
			x, gamma, beta, rm, rv := in[0], in[1], in[2], in[3], in[4]
			x.Float64s()[0] += 3 // make the channels' statistics differ from N(0, 1)
			oldM, oldV := rm.Clone(), rv.Clone()
			y, err := BatchNorm(x, gamma, beta, rm, rv, bnAttrs(true))
			require.NoError(t, err)
			// Before the affine, each channel has mean 0 and variance
			// var/(var+eps), 1 up to epsilon.
			xhat := tensor.ZerosLike(y)
			per := y.Size() / (c.shape[0] * 3)
			for i := range y.Size() {
				ch := (i / per) % 3
				xhat.SetAt(i, (y.At(i)-beta.At(ch))/gamma.At(ch))
			}
			for ch := range 3 {
				bm, bv := channelStats(x, ch)
				m, v := channelStats(xhat, ch)
				require.InDelta(t, 0, m, 1e-12)
				require.InDelta(t, bv/(bv+DefaultBatchNormEpsilon), v, 1e-12)
				require.InDelta(t, 1, v, 1e-2, "1 up to epsilon/var")
				// Keras: moving = moving·momentum + batch·(1 - momentum), biased variance.
				require.InDelta(t, oldM.At(ch)*0.99+bm*0.01, rm.At(ch), 1e-14)
				require.InDelta(t, oldV.At(ch)*0.99+bv*0.01, rv.At(ch), 1e-14)
			}
			checkDTypes(t, func() Op { return BatchNormOp(bnAttrs(true)) }, bnInputs(91, 3, c.shape...)...)
		})
	}
}

func TestBatchNormInferenceUsesMovingStats(t *testing.T) {
	in := bnInputs(95, 2, 3, 2, 4)
	x, gamma, beta, rm, rv := in[0], in[1], in[2], in[3], in[4]
	oldM, oldV := rm.Clone(), rv.Clone()
	y, err := BatchNorm(x, gamma, beta, rm, rv, bnAttrs(false))
	require.NoError(t, err)
	for i := range y.Size() {
		ch := (i / 4) % 2
		want := gamma.At(ch)*(x.At(i)-rm.At(ch))/math.Sqrt(rv.At(ch)+1e-3) + beta.At(ch)
		require.InDelta(t, want, y.At(i), 1e-12)
	}
	require.Equal(t, oldM.Float64s(), rm.Float64s(), "inference leaves the moving mean alone")
	require.Equal(t, oldV.Float64s(), rv.Float64s(), "inference leaves the moving variance alone")
	checkDTypes(t, func() Op { return BatchNormOp(bnAttrs(false)) }, in...)
}

func TestBatchNormMomentumOneKeepsMovingStats(t *testing.T) {
	in := bnInputs(97, 2, 4, 2)
	rm := in[3].Clone()
	_, err := BatchNorm(in[0], in[1], in[2], in[3], in[4], BatchNormAttrs{Momentum: 1, Epsilon: 1e-5, Training: true})
	require.NoError(t, err)
	require.Equal(t, rm.Float64s(), in[3].Float64s())
}

func TestBatchNormErrors(t *testing.T) {
	z := func(s ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, s...) }
	_, err := BatchNorm(z(2, 3, 4, 4), z(3), z(4), z(3), z(3), bnAttrs(true))
	require.ErrorContains(t, err, "batch_norm: inputs float32[2 3 4 4], float32[3], float32[4], float32[3], float32[3]")
	require.ErrorContains(t, err, "of shape [3]")
	_, err = BatchNorm(z(2, 3), z(3), z(3), z(3), z(3), BatchNormAttrs{Training: true})
	require.ErrorContains(t, err, "epsilon 0 must be positive")
	_, err = BatchNorm(z(2, 3), z(3), z(3), z(3), z(3), BatchNormAttrs{Momentum: 1.5, Epsilon: 1e-3})
	require.ErrorContains(t, err, "momentum 1.5 outside [0, 1]")
	_, err = BatchNorm(z(3), z(3), z(3), z(3), z(3), bnAttrs(false))
	require.ErrorContains(t, err, "rank >= 2")
	_, err = BatchNorm(z(0, 3), z(3), z(3), z(3), z(3), bnAttrs(true))
	require.ErrorContains(t, err, "non-empty batch")
	_, err = BatchNorm(z(2, 3), z(3), z(3), tensor.Zeros(tensor.Float64, 3), z(3), bnAttrs(true))
	require.ErrorContains(t, err, "one dtype")
}
