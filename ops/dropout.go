package ops

import (
	"math/rand/v2"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "dropout", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a DropoutAttrs) Op { return DropoutOp(a.Rate, tensor.NewRNG(a.Seed)) }), CUDA: DeviceFallback})
}

// DropoutAttrs are dropout's attributes: the rate, and the seed of the
// generator that draws the mask (Plumb's, so not in the goldens).
type DropoutAttrs struct {
	Rate float64 `json:"rate"`
	Seed uint64  `json:"-"`
}

type dropoutOp struct {
	rate float64
	rng  *rand.Rand
	keep []bool // the mask drawn by Forward, for Backward
}

// DropoutOp returns inverted dropout (tf.nn.dropout): each element of x is
// kept where a uniform draw from rng is >= rate and zeroed elsewhere, and
// kept elements are scaled by 1/(1 - rate), so the expected output is x.
// rate must be in [0, 1); at rate 0 the op is the identity and draws
// nothing (rng may then be nil). One op draws one mask, saved for its
// Backward, which passes the gradient through the same mask and scale; a
// fresh op built with an RNG of the same seed draws the same mask for the
// same shape (tensor.NewRNG).
func DropoutOp(rate float64, rng *rand.Rand) Op { return &dropoutOp{rate: rate, rng: rng} }

// Dropout returns x with inverted dropout applied; see DropoutOp.
func Dropout(x *tensor.Tensor, rate float64, rng *rand.Rand) (*tensor.Tensor, error) {
	return run(DropoutOp(rate, rng), x)
}

func (o *dropoutOp) Name() string { return "dropout" }

func (o *dropoutOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("dropout", in, 1)
	if err != nil {
		return nil, err
	}
	if !(o.rate >= 0 && o.rate < 1) {
		return nil, Errorf("dropout", in, "rate %v outside [0, 1)", o.rate)
	}
	if o.rate > 0 && o.rng == nil {
		return nil, Errorf("dropout", in, "rate %v needs a random generator, got nil", o.rate)
	}
	o.keep = make([]bool, in[0].Size())
	for i := range o.keep {
		o.keep[i] = o.rate == 0 || o.rng.Float64() >= o.rate
	}
	out := tensor.ZerosLike(in[0])
	o.mask(in[0], out, dt)
	return out, nil
}

// mask writes src·scale where kept and 0 elsewhere into dst.
func (o *dropoutOp) mask(src, dst *tensor.Tensor, dt tensor.DType) {
	scale := 1 / (1 - o.rate)
	switch dt {
	case tensor.Float32:
		dropoutKernel(src.Float32s(), dst.Float32s(), o.keep, float32(scale))
	case tensor.Float64:
		dropoutKernel(src.Float64s(), dst.Float64s(), o.keep, scale)
	}
}

func dropoutKernel[T tensor.Float](src, dst []T, keep []bool, scale T) {
	for i, k := range keep {
		if k {
			dst[i] = src[i] * scale
		}
	}
}

func (o *dropoutOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g := tensor.ZerosLike(gout)
	o.mask(gout, g, gout.DType())
	return []*tensor.Tensor{g}, nil
}
