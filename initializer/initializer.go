// Package initializer draws the initial values of parameters: Glorot
// (Xavier) and He, uniform and truncated normal, with Keras' fans;
// orthogonal matrices; plain uniform and normal. Every layer in package
// layers and every model draws its weights here, so one place says how
// Plumb initialises a network, and the same seed gives the same weights
// wherever a shape is drawn.
//
// Each initializer draws from an explicit *rand.Rand (tensor.NewRNG) in
// float64 and rounds to the requested float dtype; the random
// distributions underneath (tensor.RandUniform, tensor.RandNormal,
// tensor.TruncatedNormal) live in package tensor. Biases start at zero
// (tensor.Zeros) and batch norm's scale at one; those need no draw.
package initializer

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/plumbml/plumb/tensor"
)

// Func draws a tensor of dtype dt and shape from rng: the type of every
// initializer here, and of the initializer a layer's config can name
// (layers.EmbeddingConfig.Init).
type Func func(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error)

// Uniform returns an initializer drawing from U[lo, hi) (Keras'
// RandomUniform; its embeddings' default is Uniform(-0.05, 0.05)).
func Uniform(lo, hi float64) Func {
	return func(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
		return tensor.RandUniform(rng, dt, lo, hi, shape...)
	}
}

// Normal returns an initializer drawing from N(0, std²) (PyTorch's
// nn.Embedding default is Normal(1)).
func Normal(std float64) Func {
	return func(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
		return tensor.RandNormal(rng, dt, 0, std, shape...)
	}
}

// Fans returns the fan-in and fan-out that Keras' variance-scaling
// initializers use, for Plumb's layouts: a 2-D [in, out] matrix (Linear's
// kernel), or an n-D conv kernel [out, in, k...] (OIHW), whose receptive
// field multiplies both fans. Rank 0 and 1 follow Keras (fan = size).
func Fans(shape tensor.Shape) (fanIn, fanOut int) {
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
// (Glorot & Bengio 2010; Keras' default kernel initializer), with the fans
// of Fans.
func GlorotUniform(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, out := Fans(shape)
	l := math.Sqrt(6 / float64(max(in+out, 1)))
	return tensor.RandUniform(rng, dt, -l, l, shape...)
}

// GlorotUniformKeras is GlorotUniform with the fans of Keras' own layout
// for a kernel of rank 2 or more: the last two dims are in and out, and
// every dim before them is receptive field (multi-head attention's
// [D, heads, key_dim] and [heads, key_dim, D_out] kernels, as Keras'
// EinsumDense draws them).
func GlorotUniformKeras(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	if len(shape) < 2 {
		return nil, fmt.Errorf("initializer: GlorotUniformKeras of shape %v: want a kernel of rank 2 or more", shape)
	}
	field := tensor.Shape(shape[:len(shape)-2]).Size()
	in, out := shape[len(shape)-2]*field, shape[len(shape)-1]*field
	l := math.Sqrt(6 / float64(max(in+out, 1)))
	return tensor.RandUniform(rng, dt, -l, l, shape...)
}

// GlorotNormal draws from a normal truncated at two standard deviations,
// with std sqrt(2/(fan_in+fan_out))/0.8796... (Keras corrects the std for
// the truncation).
func GlorotNormal(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, out := Fans(shape)
	return tensor.TruncatedNormal(rng, dt, 0, math.Sqrt(2/float64(max(in+out, 1)))/truncCorrection, shape...)
}

// HeNormal draws from a truncated normal with std sqrt(2/fan_in)/0.8796...
// (He et al. 2015, as Keras' he_normal).
func HeNormal(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, _ := Fans(shape)
	return tensor.TruncatedNormal(rng, dt, 0, math.Sqrt(2/float64(max(in, 1)))/truncCorrection, shape...)
}

// HeUniform draws from U[-l, l] with l = sqrt(6/fan_in) (Keras' he_uniform).
func HeUniform(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, _ := Fans(shape)
	l := math.Sqrt(6 / float64(max(in, 1)))
	return tensor.RandUniform(rng, dt, -l, l, shape...)
}

// truncCorrection is the std of a unit normal truncated to [-2, 2]; Keras
// divides by it so that truncated draws keep the intended variance.
const truncCorrection = 0.87962566103423978
