package initializer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func initializers() map[string]Func {
	return map[string]Func{
		"uniform":              Uniform(-0.5, 2),
		"normal":               Normal(3),
		"glorot uniform":       GlorotUniform,
		"glorot uniform keras": GlorotUniformKeras,
		"glorot normal":        GlorotNormal,
		"he uniform":           HeUniform,
		"he normal":            HeNormal,
		"orthogonal":           Orthogonal,
	}
}

func TestDeterministicPerSeed(t *testing.T) {
	for name, init := range initializers() {
		t.Run(name, func(t *testing.T) {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
				a, err := init(tensor.NewRNG(3), dt, 4, 5)
				require.NoError(t, err)
				b, err := init(tensor.NewRNG(3), dt, 4, 5)
				require.NoError(t, err)
				c, err := init(tensor.NewRNG(4), dt, 4, 5)
				require.NoError(t, err)
				assert.Equal(t, dt, a.DType())
				assert.Equal(t, tensor.Shape{4, 5}, a.Shape())
				assert.Equal(t, a.Raw(), b.Raw(), "same seed, same draws")
				assert.NotEqual(t, a.Raw(), c.Raw(), "another seed, other draws")
			}
		})
	}
}

func TestErrors(t *testing.T) {
	for name, init := range initializers() {
		t.Run(name, func(t *testing.T) {
			_, err := init(tensor.NewRNG(1), tensor.Int32, 2, 2)
			require.ErrorContains(t, err, "float dtype")
			_, err = init(nil, tensor.Float32, 2, 2)
			require.ErrorContains(t, err, "nil *rand.Rand")
			z, err := init(tensor.NewRNG(1), tensor.Float32, 0, 3)
			require.NoError(t, err)
			assert.Equal(t, 0, z.Size())
		})
	}
	_, err := Orthogonal(tensor.NewRNG(1), tensor.Float32, 2, 3, 4)
	require.ErrorContains(t, err, "want a matrix")
	_, err = GlorotUniformKeras(tensor.NewRNG(1), tensor.Float32, 5)
	require.ErrorContains(t, err, "rank 2 or more")
}

// moments returns the mean and (population) standard deviation of x.
func moments(x *tensor.Tensor) (mean, std float64) {
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
func bounds(x *tensor.Tensor) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range x.Size() {
		lo, hi = min(lo, x.At(i)), max(hi, x.At(i))
	}
	return lo, hi
}

func TestDistributions(t *testing.T) {
	const trunc = truncCorrection
	tests := []struct {
		name      string
		draw      func(rng *rand.Rand) (*tensor.Tensor, error)
		mean, std float64 // expected moments
		lo, hi    float64 // every draw must lie in [lo, hi]
	}{
		{name: "glorot uniform [in,out]", draw: func(rng *rand.Rand) (*tensor.Tensor, error) {
			return GlorotUniform(rng, tensor.Float64, 200, 500)
		}, mean: 0, std: math.Sqrt(6.0/700) / math.Sqrt(3), lo: -math.Sqrt(6.0 / 700), hi: math.Sqrt(6.0 / 700)},
		{name: "glorot uniform keras [field, in, out]", draw: func(rng *rand.Rand) (*tensor.Tensor, error) {
			return GlorotUniformKeras(rng, tensor.Float64, 4, 50, 125)
		}, mean: 0, std: math.Sqrt(6.0/700) / math.Sqrt(3), lo: -math.Sqrt(6.0 / 700), hi: math.Sqrt(6.0 / 700)},
		{name: "glorot normal", draw: func(rng *rand.Rand) (*tensor.Tensor, error) {
			return GlorotNormal(rng, tensor.Float64, 300, 400)
		}, mean: 0, std: math.Sqrt(2.0 / 700), lo: -2 * math.Sqrt(2.0/700) / trunc, hi: 2 * math.Sqrt(2.0/700) / trunc},
		{name: "he uniform OIHW", draw: func(rng *rand.Rand) (*tensor.Tensor, error) {
			return HeUniform(rng, tensor.Float32, 64, 32, 3, 3)
		}, mean: 0, std: math.Sqrt(6.0/288) / math.Sqrt(3), lo: -math.Sqrt(6.0 / 288), hi: math.Sqrt(6.0 / 288)},
		{name: "he normal OIHW", draw: func(rng *rand.Rand) (*tensor.Tensor, error) {
			return HeNormal(rng, tensor.Float64, 128, 32, 5, 5)
		}, mean: 0, std: math.Sqrt(2.0 / 800), lo: -2 * math.Sqrt(2.0/800) / trunc, hi: 2 * math.Sqrt(2.0/800) / trunc},
		{name: "normal", draw: func(rng *rand.Rand) (*tensor.Tensor, error) {
			return Normal(0.5)(rng, tensor.Float32, 100_000)
		}, mean: 0, std: 0.5, lo: math.Inf(-1), hi: math.Inf(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := tc.draw(tensor.NewRNG(11))
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

func TestGlorotUniformLimit(t *testing.T) {
	tests := []struct {
		name   string
		shape  []int
		fanIn  int
		fanOut int
	}{
		{name: "linear [in,out]", shape: []int{784, 128}, fanIn: 784, fanOut: 128},
		{name: "conv OIHW", shape: []int{32, 16, 5, 5}, fanIn: 16 * 25, fanOut: 32 * 25},
		{name: "conv 1-D OIW", shape: []int{8, 4, 3}, fanIn: 12, fanOut: 24},
		{name: "vector", shape: []int{10}, fanIn: 10, fanOut: 10},
		{name: "scalar", shape: []int{}, fanIn: 1, fanOut: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, out := Fans(tc.shape)
			assert.Equal(t, tc.fanIn, in, "fan in")
			assert.Equal(t, tc.fanOut, out, "fan out")
			lim := math.Sqrt(6 / float64(tc.fanIn+tc.fanOut))
			x, err := GlorotUniform(tensor.NewRNG(5), tensor.Float64, tc.shape...)
			require.NoError(t, err)
			lo, hi := bounds(x)
			assert.GreaterOrEqual(t, lo, -lim)
			assert.LessOrEqual(t, hi, lim)
			if x.Size() >= 1000 {
				// Enough draws to come near both ends of the range.
				assert.Less(t, lo, -0.99*lim)
				assert.Greater(t, hi, 0.99*lim)
			}
		})
	}
}

func TestOrthogonal(t *testing.T) {
	for _, s := range [][2]int{{4, 16}, {6, 3}, {5, 5}} {
		q, err := Orthogonal(tensor.NewRNG(1), tensor.Float64, s[0], s[1])
		require.NoError(t, err)
		rows := s[0] <= s[1] // rows orthonormal, else columns
		n, m := s[1], s[0]
		if !rows {
			n, m = s[0], s[1]
		}
		at := func(v, i int) float64 {
			if rows {
				return q.At(v*s[1] + i)
			}
			return q.At(i*s[1] + v)
		}
		for a := 0; a < m; a++ {
			for b := 0; b < m; b++ {
				dot := 0.0
				for i := 0; i < n; i++ {
					dot += at(a, i) * at(b, i)
				}
				want := 0.0
				if a == b {
					want = 1
				}
				require.InDelta(t, want, dot, 1e-12)
			}
		}
	}
}
