package run

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// Clip's kernel against min(max(x, lo), hi) as ONNX Runtime computes it,
// in float32 and float64: NaN passes, −0 stays −0, the bounds are
// inclusive, lo > hi gives hi everywhere, and an int tensor is an error.
func TestClampKernel(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	x := []float64{-7, -0.5, negZero, 0, 0.25, 6, 6.5, nan, math.Inf(1), math.Inf(-1)}
	for _, tc := range []struct {
		name   string
		lo, hi float64
		want   []float64
	}{
		{"relu6", 0, 6, []float64{0, 0, negZero, 0, 0.25, 6, 6, nan, 6, 0}},
		{"band", -1, 0.5, []float64{-1, -0.5, negZero, 0, 0.25, 0.5, 0.5, nan, 0.5, -1}},
		{"lo_over_hi", 2, 1, []float64{1, 1, 1, 1, 1, 1, 1, nan, 1, 1}},
		{"upper_only", math.Inf(-1), 0, []float64{-7, -0.5, negZero, 0, 0, 0, 0, nan, 0, math.Inf(-1)}},
		{"zero_to_neg_zero", 0, negZero, []float64{0, 0, negZero, 0, negZero, negZero, negZero, nan, negZero, 0}},
		{"neg_zero_to_zero", negZero, 0, []float64{negZero, negZero, negZero, 0, 0, 0, 0, nan, 0, negZero}},
	} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			t.Run(tc.name+"_"+dt.String(), func(t *testing.T) {
				in, err := tensor.MustFromSlice(x, len(x)).Cast(dt)
				require.NoError(t, err)
				out, err := clampKernel(tc.lo, tc.hi)([]*tensor.Tensor{in})
				require.NoError(t, err)
				require.Equal(t, dt, out[0].DType())
				for i, w := range tc.want {
					got := out[0].At(i)
					if math.IsNaN(w) {
						require.True(t, math.IsNaN(got), "element %d: %v", i, got)
						continue
					}
					require.Equal(t, w, got, "element %d", i)
					require.Equal(t, math.Signbit(w), math.Signbit(got), "element %d's sign", i)
				}
			})
		}
	}
	_, err := clampKernel(0, 6)([]*tensor.Tensor{tensor.MustFromSlice([]int64{1, 9})})
	require.ErrorContains(t, err, "clip")
}
