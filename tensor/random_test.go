package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type initializer func(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error)

func initializers() map[string]initializer {
	return map[string]initializer{
		"uniform": func(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
			return RandUniform(rng, dt, -0.5, 2, shape...)
		},
		"normal": func(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
			return RandNormal(rng, dt, 1, 3, shape...)
		},
		"truncated normal": func(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
			return TruncatedNormal(rng, dt, -1, 0.5, shape...)
		},
	}
}

func TestRandomDeterministicPerSeed(t *testing.T) {
	for name, init := range initializers() {
		t.Run(name, func(t *testing.T) {
			for _, dt := range []DType{Float32, Float64} {
				a, err := init(NewRNG(3), dt, 4, 5)
				require.NoError(t, err)
				b, err := init(NewRNG(3), dt, 4, 5)
				require.NoError(t, err)
				c, err := init(NewRNG(4), dt, 4, 5)
				require.NoError(t, err)
				assert.Equal(t, dt, a.DType())
				assert.Equal(t, Shape{4, 5}, a.Shape())
				assert.Equal(t, a.Raw(), b.Raw(), "same seed, same draws")
				assert.NotEqual(t, a.Raw(), c.Raw(), "another seed, other draws")
			}
		})
	}
}

func TestRandomErrors(t *testing.T) {
	for name, init := range initializers() {
		t.Run(name, func(t *testing.T) {
			_, err := init(NewRNG(1), Int32, 2, 2)
			require.ErrorContains(t, err, "float dtype")
			_, err = init(NewRNG(1), Float32, 2, -2)
			require.ErrorContains(t, err, "negative dim")
			z, err := init(NewRNG(1), Float32, 0, 3)
			require.NoError(t, err)
			assert.Equal(t, 0, z.Size())
		})
	}
}

// moments returns the mean and (population) standard deviation of x.
func moments(x *Tensor) (mean, std float64) {
	n := float64(x.Size())
	for i := range x.Size() {
		mean += x.At(i)
	}
	mean /= n
	for i := range x.Size() {
		d := x.At(i) - mean
		std += d * d
	}
	return mean, math.Sqrt(std / n)
}

// bounds returns the smallest and largest element of x.
func bounds(x *Tensor) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range x.Size() {
		lo, hi = min(lo, x.At(i)), max(hi, x.At(i))
	}
	return lo, hi
}

func TestRandomDistributions(t *testing.T) {
	const n = 100_000
	// The std of N(0,1) truncated to [-2, 2], which the truncated draws keep.
	const trunc = 0.87962566103423978
	tests := []struct {
		name      string
		draw      func(rng *rand.Rand) (*Tensor, error)
		mean, std float64 // expected moments
		lo, hi    float64 // every draw must lie in [lo, hi]
	}{
		{name: "uniform", draw: func(rng *rand.Rand) (*Tensor, error) { return RandUniform(rng, Float64, -1, 3, n) },
			mean: 1, std: 4 / math.Sqrt(12), lo: -1, hi: 3},
		{name: "normal", draw: func(rng *rand.Rand) (*Tensor, error) { return RandNormal(rng, Float32, 2, 0.5, n) },
			mean: 2, std: 0.5, lo: math.Inf(-1), hi: math.Inf(1)},
		{name: "truncated normal", draw: func(rng *rand.Rand) (*Tensor, error) { return TruncatedNormal(rng, Float64, 1, 2, n) },
			mean: 1, std: 2 * trunc, lo: 1 - 4, hi: 1 + 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := tc.draw(NewRNG(11))
			require.NoError(t, err)
			lo, hi := bounds(x)
			assert.GreaterOrEqual(t, lo, tc.lo)
			assert.LessOrEqual(t, hi, tc.hi)
			mean, std := moments(x)
			// With n >= 100k draws the sample mean is within a few
			// std/sqrt(n) and the sample std within about 1%.
			assert.InDelta(t, tc.mean, mean, 5*tc.std/math.Sqrt(float64(x.Size())), "mean")
			assert.InEpsilon(t, tc.std, std, 0.02, "std")
		})
	}
}

func TestTruncatedNormalWithinTwoStd(t *testing.T) {
	for _, dt := range []DType{Float32, Float64} {
		x, err := TruncatedNormal(NewRNG(9), dt, 5, 0.1, 50_000)
		require.NoError(t, err)
		lo, hi := bounds(x)
		assert.GreaterOrEqual(t, lo, 5-0.2-1e-6, dt.String())
		assert.LessOrEqual(t, hi, 5+0.2+1e-6, dt.String())
		assert.Less(t, lo, 5-0.19, "the tails up to 2 std are reached")
		assert.Greater(t, hi, 5+0.19, "the tails up to 2 std are reached")
	}
}
