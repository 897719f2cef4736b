package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMaxAbsMatchesDefinition checks wideScores' maxAbs against the plain
// max of |x| over random and odd lengths, with the largest magnitude at
// every position class and the special values.
func TestMaxAbsMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(40, 36))
	ref := func(x []float32) float64 {
		m := 0.0
		for _, v := range x {
			if v != v {
				return math.NaN()
			}
			m = max(m, math.Abs(float64(v)))
		}
		return m
	}
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 1001} {
		for at := range min(n, 5) {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			x[n-1-at] = -40 // the largest magnitude, negative, near the end
			require.Equal(t, ref(x), maxAbs(x), "n=%d at=%d", n, at)
		}
	}
	inf := float32(math.Inf(1))
	cases := []struct {
		name string
		x    []float32
		want float64
	}{
		{"empty", nil, 0},
		{"negative zero", []float32{float32(math.Copysign(0, -1))}, 0},
		{"-Inf", []float32{1, -inf, 2, 3, 4}, math.Inf(1)},
		{"max float32", []float32{-math.MaxFloat32, 1}, math.MaxFloat32},
		{"subnormal", []float32{0x1p-149, -0x1p-148}, 0x1p-148},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, maxAbs(tc.x), tc.name)
	}
	require.True(t, math.IsNaN(maxAbs([]float32{1, 2, float32(math.NaN()), -inf, 5})))
}
