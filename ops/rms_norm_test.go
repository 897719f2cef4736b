package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("rms_norm",
	gradCase{name: "rows", attrs: Attrs{Epsilon: DefaultRMSNormEpsilon}, in: ins(randn(111, 3, 5), randn(112, 5)), wrt: []int{0, 1}},
	gradCase{name: "rank3", attrs: Attrs{Epsilon: 1e-3}, in: ins(randn(113, 2, 3, 4), randn(114, 4)), wrt: []int{0, 1}},
)

func TestRMSNormForward(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape []int
		eps   float64
	}{{"vector", []int{7}, 1e-6}, {"rows", []int{4, 6}, 1e-6}, {"rank3", []int{2, 3, 4}, 1e-3}, {"empty rows", []int{0, 3}, 1e-6}} {
		t.Run(c.name, func(t *testing.T) {
			x := randn(115, c.shape...)
			d := c.shape[len(c.shape)-1]
			gamma := randn(116, d)
			got, err := RMSNorm(x, gamma, c.eps)
			require.NoError(t, err)
			require.Equal(t, x.Shape(), got.Shape())
			for r := range x.Size() / d {
				ms := 0.0
				for j := range d {
					ms += x.At(r*d+j) * x.At(r*d+j)
				}
				for j := range d {
					want := gamma.At(j) * x.At(r*d+j) / math.Sqrt(ms/float64(d)+c.eps)
					require.InDelta(t, want, got.At(r*d+j), 1e-12)
				}
			}
			checkDTypes(t, func() Op { return RMSNormOp(c.eps) }, x, gamma)
		})
	}
	require.Equal(t, 1e-6, DefaultRMSNormEpsilon, "Keras' default")
}

func TestRMSNormErrors(t *testing.T) {
	z := func(s ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, s...) }
	for _, c := range []struct {
		x, gamma *tensor.Tensor
		eps      float64
		want     string
	}{
		{z(2, 3), z(2), 1e-6, "rms_norm: inputs float32[2 3], float32[2]: want gamma of shape [3]"},
		{z(2, 3), z(1, 3), 1e-6, "want gamma of shape [3]"},
		{z(), z(1), 1e-6, "want x of rank 1 or more"},
		{z(2, 3), z(3), 0, "epsilon 0 must be positive"},
		{z(2, 3), z(3), math.Inf(1), "epsilon +Inf must be positive"},
		{z(2, 3), tensor.Zeros(tensor.Float64, 3), 1e-6, "rms_norm"},
	} {
		_, err := RMSNorm(c.x, c.gamma, c.eps)
		require.ErrorContains(t, err, c.want)
	}
}
