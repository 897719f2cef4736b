package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("layer_norm",
	gradCase{name: "last", attrs: Attrs{NormAxes: 1, Epsilon: DefaultLayerNormEpsilon}, in: ins(randn(101, 3, 5), randn(102, 5), randn(103, 5)), wrt: []int{0, 1, 2}},
	gradCase{name: "last2", attrs: Attrs{NormAxes: 2, Epsilon: DefaultLayerNormEpsilon}, in: ins(randn(104, 2, 3, 4), randn(105, 3, 4), randn(106, 3, 4)), wrt: []int{0, 1, 2}},
)

func TestLayerNormForward(t *testing.T) {
	for _, c := range []struct {
		name  string
		axes  int
		shape []int
	}{{"last", 1, []int{4, 6}}, {"last2", 2, []int{2, 3, 4}}, {"all", 3, []int{2, 3, 4}}} {
		t.Run(c.name, func(t *testing.T) {
			x := randn(107, c.shape...)
			norm := c.shape[len(c.shape)-c.axes:]
			gamma, beta := randn(108, norm...), randn(109, norm...)
			got, err := LayerNorm(x, gamma, beta, c.axes, 1e-3)
			require.NoError(t, err)
			d := gamma.Size()
			for r := range x.Size() / d {
				mean, v := 0.0, 0.0
				for j := range d {
					mean += x.At(r*d + j)
				}
				mean /= float64(d)
				for j := range d {
					v += (x.At(r*d+j) - mean) * (x.At(r*d+j) - mean)
				}
				v /= float64(d)
				for j := range d {
					want := gamma.At(j)*(x.At(r*d+j)-mean)/math.Sqrt(v+1e-3) + beta.At(j)
					require.InDelta(t, want, got.At(r*d+j), 1e-12)
				}
			}
			checkDTypes(t, func() Op { return LayerNormOp(c.axes, 1e-3) }, x, gamma, beta)
		})
	}
	require.Equal(t, 1e-3, DefaultLayerNormEpsilon, "Keras' default")
}

func TestLayerNormErrors(t *testing.T) {
	z := func(s ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, s...) }
	_, err := LayerNorm(z(2, 3), z(2), z(3), 1, 1e-3)
	require.ErrorContains(t, err, "layer_norm: inputs float32[2 3], float32[2], float32[3]: want gamma and beta of shape [3]")
	_, err = LayerNorm(z(2, 3), z(3), z(3), 0, 1e-3)
	require.ErrorContains(t, err, "last 0 axes of a rank-2 x")
	_, err = LayerNorm(z(2, 3), z(3), z(3), 3, 1e-3)
	require.ErrorContains(t, err, "last 3 axes")
	_, err = LayerNorm(z(2, 3), z(3), z(3), 1, 0)
	require.ErrorContains(t, err, "epsilon 0 must be positive")
}
