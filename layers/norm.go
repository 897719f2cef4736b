package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// BatchNorm normalises over axis 1 of [N, C] or NCHW input, as Keras'
// BatchNormalization: gamma ones, beta zeros, moving mean zeros and moving
// variance ones (non-trainable state), momentum 0.99 and epsilon 1e-3.
type BatchNorm struct {
	Gamma, Beta           *graph.Param
	MovingMean, MovingVar *graph.Param
	// Attrs holds the momentum and epsilon (Training is the tape's choice).
	Attrs ops.BatchNormAttrs
}

// NewBatchNorm returns a BatchNorm over channels features with Keras' defaults.
func NewBatchNorm(name string, channels int, opts ...Option) (*BatchNorm, error) {
	c := newConfig(opts)
	if channels <= 0 {
		return nil, fmt.Errorf("layers: batch norm %q: channels=%d must be positive", name, channels)
	}
	one := func() *tensor.Tensor { t, _ := tensor.Ones(c.dtype, channels); return t }
	return &BatchNorm{
		Gamma:      graph.NewParam(name+"/gamma", one()),
		Beta:       graph.NewParam(name+"/beta", tensor.Zeros(c.dtype, channels)),
		MovingMean: graph.NewState(name+"/moving_mean", tensor.Zeros(c.dtype, channels)),
		MovingVar:  graph.NewState(name+"/moving_variance", one()),
		Attrs:      ops.BatchNormAttrs{Momentum: ops.DefaultBatchNormMomentum, Epsilon: ops.DefaultBatchNormEpsilon},
	}, nil
}

// Forward normalises x; on a training tape it also updates the moving statistics.
func (l *BatchNorm) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("batch norm", x)
	}
	if err := missing("batch norm", l.Gamma, l.Beta, l.MovingMean, l.MovingVar); err != nil {
		return t.Fail(err)
	}
	return out("batch norm", l, x.Err(), graph.BatchNorm(x, t.Param(l.Gamma), t.Param(l.Beta), l.MovingMean.Value, l.MovingVar.Value, l.Attrs))
}

// Params returns gamma, beta and the two moving statistics.
func (l *BatchNorm) Params() []*graph.Param {
	return []*graph.Param{l.Gamma, l.Beta, l.MovingMean, l.MovingVar}
}

// LayerNorm normalises over the last axis, as Keras' LayerNormalization
// (gamma ones, beta zeros, epsilon 1e-3).
type LayerNorm struct {
	Gamma, Beta *graph.Param
	Epsilon     float64
}

// NewLayerNorm returns a LayerNorm over a last axis of size features.
func NewLayerNorm(name string, features int, opts ...Option) (*LayerNorm, error) {
	c := newConfig(opts)
	if features <= 0 {
		return nil, fmt.Errorf("layers: layer norm %q: features=%d must be positive", name, features)
	}
	g, _ := tensor.Ones(c.dtype, features)
	return &LayerNorm{
		Gamma:   graph.NewParam(name+"/gamma", g),
		Beta:    graph.NewParam(name+"/beta", tensor.Zeros(c.dtype, features)),
		Epsilon: ops.DefaultLayerNormEpsilon,
	}, nil
}

// Forward normalises x over its last axis.
func (l *LayerNorm) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("layer norm", x)
	}
	return out("layer norm", l, x.Err(), graph.LayerNorm(x, t.Param(l.Gamma), t.Param(l.Beta), 1, l.Epsilon))
}

// Params returns gamma and beta.
func (l *LayerNorm) Params() []*graph.Param { return []*graph.Param{l.Gamma, l.Beta} }

// Dropout zeroes inputs at Rate on a training tape and scales the rest by
// 1/(1-Rate); on an inference tape it is the identity.
type Dropout struct {
	Rate float64
	RNG  *rand.Rand
}

// NewDropout checks the rate, as Keras does when the layer is built, so a
// bad rate is caught even by a model only ever run for inference.
func NewDropout(rate float64, rng *rand.Rand) (Dropout, error) {
	if !(rate >= 0 && rate < 1) {
		return Dropout{}, fmt.Errorf("layers: dropout rate %v must be in [0, 1)", rate)
	}
	if rng == nil && rate > 0 {
		return Dropout{}, fmt.Errorf("layers: dropout at rate %v needs a random source", rate)
	}
	return Dropout{Rate: rate, RNG: rng}, nil
}

// Forward applies dropout.
func (l Dropout) Forward(x *graph.Value) *graph.Value { return graph.Dropout(x, l.Rate, l.RNG) }

// Params returns nothing.
func (Dropout) Params() []*graph.Param { return nil }
