package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
)

// Linear is a fully connected layer, y = x·W + b, with W [in, out] (Keras
// Dense's kernel layout) initialised Glorot-uniform and b zero.
type Linear struct {
	kernelBias
}

// NewLinear returns a Linear layer whose parameters are named name/kernel and name/bias.
func NewLinear(name string, in, out int, rng *rand.Rand, opts ...Option) (*Linear, error) {
	c := newConfig(opts)
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("layers: linear %q: sizes in=%d out=%d must be positive", name, in, out)
	}
	w, err := initializer.GlorotUniform(rng, c.dtype, in, out)
	if err != nil {
		return nil, fmt.Errorf("layers: linear %q: %w", name, err)
	}
	return &Linear{newKernelBias(name, w, out, c)}, nil
}

// Forward applies x·W + b over the last axis of x.
func (l *Linear) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("linear", x)
	}
	w, b := l.values(t)
	return out("linear", l, x.Err(), graph.Linear(x, w, b))
}

// ForwardConcat applies [a, b]·W + b over the last axes of a and b, as
// Forward on their concatenation would, without building it (Fluid's fc
// over a list of inputs).
func (l *Linear) ForwardConcat(a, b *graph.Value) *graph.Value {
	t := a.Tape()
	if t == nil {
		return noTape("linear", a)
	}
	w, bias := l.values(t)
	return out("linear", l, firstErr(a, b), graph.LinearConcat(a, b, w, bias))
}
