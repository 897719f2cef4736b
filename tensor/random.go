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

// Fans returns the fan-in and fan-out that Keras' variance-scaling
// initializers use, for Plumb's layouts: a 2-D [in, out] matrix (Linear's
// kernel), or an n-D conv kernel [out, in, k...] (OIHW), whose receptive
// field multiplies both fans. Rank 0 and 1 follow Keras (fan = size).
func Fans(shape Shape) (fanIn, fanOut int) {
	switch len(shape) {
	case 0:
		return 1, 1
	case 1:
		return shape[0], shape[0]
	case 2:
		return shape[0], shape[1]
	}
	field := shape[2:].Size()
	return shape[1] * field, shape[0] * field
}

// GlorotUniform draws from U[-l, l] with l = sqrt(6/(fan_in+fan_out))
// (Glorot & Bengio 2010; Keras' default kernel initializer).
func GlorotUniform(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
	in, out := Fans(shape)
	l := math.Sqrt(6 / float64(max(in+out, 1)))
	return RandUniform(rng, dt, -l, l, shape...)
}

// GlorotNormal draws from a truncated normal with std sqrt(2/(fan_in+fan_out))/0.8796...
// (Keras corrects the std for the truncation at two sigmas).
func GlorotNormal(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
	in, out := Fans(shape)
	return TruncatedNormal(rng, dt, 0, math.Sqrt(2/float64(max(in+out, 1)))/truncCorrection, shape...)
}

// HeNormal draws from a truncated normal with std sqrt(2/fan_in)/0.8796...
// (He et al. 2015, as Keras' he_normal).
func HeNormal(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
	in, _ := Fans(shape)
	return TruncatedNormal(rng, dt, 0, math.Sqrt(2/float64(max(in, 1)))/truncCorrection, shape...)
}

// HeUniform draws from U[-l, l] with l = sqrt(6/fan_in) (Keras' he_uniform).
func HeUniform(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
	in, _ := Fans(shape)
	l := math.Sqrt(6 / float64(max(in, 1)))
	return RandUniform(rng, dt, -l, l, shape...)
}

// truncCorrection is the std of a unit normal truncated to [-2, 2]; Keras
// divides by it so that truncated draws keep the intended variance.
const truncCorrection = 0.87962566103423978
