package vec

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// Clamp against clampOne, std::min(std::max(x, lo), hi), bit for bit: on
// random values with zeros of both signs, NaNs and infinities, odd
// lengths (the assembly's 32- and 8-wide steps and the scalar tail), every
// kind of bounds (signed zeros, lo > hi, infinite), float32 with and
// without AVX and float64.
func TestClampMatchesComparisons(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	negZero := math.Copysign(0, -1)
	special := []float64{0, negZero, math.NaN(), math.Inf(1), math.Inf(-1), 6, -1}
	bounds := [][2]float64{{0, 6}, {-1, 1}, {-3, -2}, {negZero, 0}, {0, negZero}, {2, 1}, {math.Inf(-1), 0}, {0, math.Inf(1)}}
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 100, 1027} {
		x := make([]float64, n)
		for i := range x {
			if i%5 == 0 {
				x[i] = special[r.Intn(len(special))]
			} else {
				x[i] = r.NormFloat64() * 4
			}
		}
		x32 := make([]float32, n)
		for i, v := range x {
			x32[i] = float32(v)
		}
		for _, b := range bounds {
			for _, avx := range []bool{false, true} {
				old := hasAVX
				setAVX(avx && old)
				y := make([]float32, n)
				Clamp(y, x32, float32(b[0]), float32(b[1]))
				setAVX(old)
				for i, v := range x32 {
					want := clampOne(v, float32(b[0]), float32(b[1]))
					require.Equal(t, math.Float32bits(want), math.Float32bits(y[i]), "n %d x %v bounds %v avx %v", n, v, b, avx)
				}
			}
			y := make([]float64, n)
			Clamp(y, x, b[0], b[1])
			for i, v := range x {
				want := clampOne(v, b[0], b[1])
				require.Equal(t, math.Float64bits(want), math.Float64bits(y[i]), "n %d x %v bounds %v", n, v, b)
			}
		}
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	Clamp(x, x, 2, 7) // in place
	require.Equal(t, []float32{2, 2, 3, 4, 5, 6, 7, 7, 7}, x)
}
