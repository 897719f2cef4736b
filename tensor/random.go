package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// NewRNG returns a seeded PCG generator. Every random draw in Plumb takes an
// explicit *rand.Rand so that runs are reproducible from one seed.
func NewRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

func fillWith(rng *rand.Rand, dt DType, shape []int, draw func() float64) (*Tensor, error) {
	if rng == nil {
		return nil, fmt.Errorf("tensor: random fill of shape %v with a nil *rand.Rand (use tensor.NewRNG)", shape)
	}
	if !dt.IsFloat() {
		return nil, fmt.Errorf("tensor: random fill wants a float dtype, got %v", dt)
	}
	t, err := New(dt, shape...)
	if err != nil {
		return nil, err
	}
	for i := range t.Size() {
		t.SetAt(i, draw())
	}
	return t, nil
}

// RandUniform draws from U[lo, hi).
func RandUniform(rng *rand.Rand, dt DType, lo, hi float64, shape ...int) (*Tensor, error) {
	return fillWith(rng, dt, shape, func() float64 { return lo + (hi-lo)*rng.Float64() })
}

// RandNormal draws from N(mean, std²).
func RandNormal(rng *rand.Rand, dt DType, mean, std float64, shape ...int) (*Tensor, error) {
	return fillWith(rng, dt, shape, func() float64 { return mean + std*rng.NormFloat64() })
}

// TruncatedNormal draws from N(mean, std²) and redraws any value more than
// two standard deviations from the mean, as tf.random.truncated_normal does.
func TruncatedNormal(rng *rand.Rand, dt DType, mean, std float64, shape ...int) (*Tensor, error) {
	return fillWith(rng, dt, shape, func() float64 {
		for {
			z := rng.NormFloat64()
			if math.Abs(z) <= 2 {
				return mean + std*z
			}
		}
	})
}
