package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Linear is a fully connected layer, y = x·W + b, with W [in, out] (Keras
// Dense's kernel layout) initialised Glorot-uniform and b zero.
type Linear struct {
	W, B *graph.Param // B is nil with NoBias
}

// NewLinear returns a Linear layer whose parameters are named name/kernel and name/bias.
func NewLinear(name string, in, out int, rng *rand.Rand, opts ...Option) (*Linear, error) {
	c := newConfig(opts)
	if in <= 0 || out <= 0 {
		return nil, fmt.Errorf("layers: linear %q: sizes in=%d out=%d must be positive", name, in, out)
	}
	w, err := tensor.GlorotUniform(rng, c.dtype, in, out)
	if err != nil {
		return nil, fmt.Errorf("layers: linear %q: %w", name, err)
	}
	l := &Linear{W: graph.NewParam(name+"/kernel", w)}
	if !c.noBias {
		l.B = graph.NewParam(name+"/bias", tensor.Zeros(c.dtype, out))
	}
	return l, nil
}

// Forward applies x·W + b over the last axis of x.
func (l *Linear) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return x
	}
	var b *graph.Value
	if l.B != nil {
		b = t.Param(l.B)
	}
	return graph.Linear(x, t.Param(l.W), b)
}

// Params returns the kernel and, if present, the bias.
func (l *Linear) Params() []*graph.Param {
	if l.B == nil {
		return []*graph.Param{l.W}
	}
	return []*graph.Param{l.W, l.B}
}
