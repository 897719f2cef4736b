package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The sequence layers work on ragged batches (graph.Seq) rather than on a
// single value, so their Forward takes and returns a Seq (SeqLayer) or,
// for pooling, gives one row per sequence (SeqReducer). Compose them with
// per-step layers through Seq.With: s.With(linear.Forward(s.Values)).

// SequencePool pools each sequence into one row (Paddle's sequence_pool):
// Kind is sum, average, sqrt, max, first or last, and an empty sequence
// yields Pad. An unknown Kind fails at Forward, naming sequence_pool.
type SequencePool struct {
	Kind ops.SequencePoolType
	Pad  float64
}

// Forward pools s [total, D...] into [B, D...].
func (l SequencePool) Forward(s graph.Seq) *graph.Value { return graph.SequencePool(s, l.Kind, l.Pad) }

// Params returns nothing: pooling has no parameters.
func (SequencePool) Params() []*graph.Param { return nil }

// SequenceConv is Paddle's sequence_conv layer: each step sees a window of
// ContextLength steps from ContextStart within its sequence, times Filter
// [ContextLength·in, out] (Glorot-uniform), plus Bias [out] (zero). Steps
// outside the sequence are zero, or with trainable padding the rows of
// Padding [upPad+downPad, in] (Paddle's paddingTrainable; initialised to
// zero, so it starts as zero padding).
type SequenceConv struct {
	Filter, Padding, Bias       *graph.Param // Padding nil without trainable padding; Bias nil with NoBias
	ContextStart, ContextLength int
}

// SequenceConvConfig shapes a SequenceConv: In to Out features, a window
// of ContextLength steps from ContextStart (negative: before the step),
// and with TrainablePadding a trainable Padding instead of zeros.
type SequenceConvConfig struct {
	In, Out                     int
	ContextStart, ContextLength int
	TrainablePadding            bool
}

// NewSequenceConv returns a SequenceConv shaped by cfg whose parameters
// are named name/filter, name/padding and name/bias.
func NewSequenceConv(name string, cfg SequenceConvConfig, rng *rand.Rand, opts ...Option) (*SequenceConv, error) {
	c := newConfig(opts)
	in, out, contextStart, contextLength := cfg.In, cfg.Out, cfg.ContextStart, cfg.ContextLength
	if in <= 0 || out <= 0 || contextLength <= 0 {
		return nil, fmt.Errorf("layers: sequence conv %q: in=%d out=%d context length %d must be positive", name, in, out, contextLength)
	}
	f, err := initializer.GlorotUniform(rng, c.dtype, contextLength*in, out)
	if err != nil {
		return nil, fmt.Errorf("layers: sequence conv %q: %w", name, err)
	}
	l := &SequenceConv{Filter: graph.NewParam(name+"/filter", f), ContextStart: contextStart, ContextLength: contextLength}
	if cfg.TrainablePadding {
		l.Padding = graph.NewParam(name+"/padding", tensor.Zeros(c.dtype, ops.SequenceConvPadRows(contextStart, contextLength), in))
	}
	if !c.noBias {
		l.Bias = graph.NewParam(name+"/bias", tensor.Zeros(c.dtype, out))
	}
	return l, nil
}

// Forward convolves s [total, in] into [total, out] with s's offsets.
func (l *SequenceConv) Forward(s graph.Seq) graph.Seq {
	t := s.Values.Tape()
	if t == nil {
		return s
	}
	var pad *graph.Value
	if l.Padding != nil {
		pad = t.Param(l.Padding)
	}
	y := graph.SequenceConv(s, t.Param(l.Filter), pad, l.ContextStart, l.ContextLength)
	if l.Bias != nil {
		y = y.With(graph.Add(y.Values, t.Param(l.Bias)))
	}
	return outSeq("sequence conv", l, s.Values.Err(), y)
}

// Params returns the filter and, if present, the padding and the bias.
func (l *SequenceConv) Params() []*graph.Param {
	ps := []*graph.Param{l.Filter}
	for _, p := range []*graph.Param{l.Padding, l.Bias} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// ForwardMaxPool returns, for each sequence of s, the maximum over its steps
// of act(Forward(s)) (Paddle's sequence_conv_pool with max pooling), for an
// act that never decreases (tanh, sigmoid, relu; nil for none). It
// computes act(max(conv(s)) + Bias): the maximum commutes with adding a
// per-column bias and with such an act, so bias and act run on [B, out]
// rather than on every step, and the gradient reaches the same steps;
// convolution and pooling are one op (graph.SequenceConvPoolMax) whose
// backward pass touches only each column's maximum step. The one
// difference: an empty sequence pools to act(Bias), not to zero.
func (l *SequenceConv) ForwardMaxPool(s graph.Seq, act func(*graph.Value) *graph.Value) *graph.Value {
	t := s.Values.Tape()
	if t == nil {
		return noTape("sequence conv", s.Values)
	}
	var pad *graph.Value
	if l.Padding != nil {
		pad = t.Param(l.Padding)
	}
	y := graph.SequenceConvPoolMax(s, t.Param(l.Filter), pad, l.ContextStart, l.ContextLength)
	if l.Bias != nil {
		y = graph.Add(y, t.Param(l.Bias))
	}
	if act != nil {
		y = act(y)
	}
	return y
}
