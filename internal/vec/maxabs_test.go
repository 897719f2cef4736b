package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// plainMaxAbs is the reference: a scalar scan, NaN winning.
func plainMaxAbs(x []float32) float32 {
	var m float32
	for _, v := range x {
		if v != v {
			return v
		}
		m = max(m, float32(math.Abs(float64(v))))
	}
	return m
}

// MaxAbs equals a plain scan on every length, with the largest magnitude
// negative or positive at the ends, inside the vector part and in the
// tail, with infinities, and with a NaN anywhere, on both paths.
func TestMaxAbs(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		require.Equal(t, float32(0), MaxAbs([]float32{}))
		for _, n := range lengths[1:] {
			for _, at := range []int{0, n / 2, n - 1, min(7, n-1), min(8, n-1)} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				for _, big := range []float32{-100, 100, float32(math.Inf(-1)), -0.0} {
					x[at] = big
					require.Equal(t, plainMaxAbs(x), MaxAbs(x), "n %d, %v at %d", n, big, at)
				}
				x[at] = float32(math.NaN())
				require.True(t, math.IsNaN(float64(MaxAbs(x))), "n %d, NaN at %d", n, at)
				x64 := make([]float64, n)
				for i, v := range x {
					x64[i] = float64(v)
				}
				require.True(t, math.IsNaN(MaxAbs(x64)), "float64, n %d, NaN at %d", n, at)
				x64[at] = -7e300
				require.Equal(t, 7e300, MaxAbs(x64))
			}
		}
	})
}
