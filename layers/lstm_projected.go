package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
)

// ProjectedLSTM is Paddle's dynamic_lstm: an LSTM layer whose per-step
// input is already the gates' projection [total, 4H] (the output of an fc
// layer of 4H units, which the model may also use elsewhere), so it holds
// only the recurrent kernel U [H, 4H] (orthogonal), the bias [4H] (zero
// but for the forget gate's block, 1, as layers.LSTM) and, with peepholes,
// a zero peephole [3H]. Reverse runs each sequence from its last step
// (dynamic_lstm's is_reverse), outputs aligned with the inputs.
type ProjectedLSTM struct {
	Units   int
	Reverse bool
	U, B, P *graph.Param // P nil without peepholes
}

// NewProjectedLSTM returns a ProjectedLSTM of units hidden units whose
// parameters are named name/recurrent_kernel, name/bias (and
// name/peephole).
func NewProjectedLSTM(name string, units int, reverse, peepholes bool, rng *rand.Rand, opts ...Option) (*ProjectedLSTM, error) {
	if units <= 0 {
		return nil, fmt.Errorf("layers: projected lstm %q: units=%d must be positive", name, units)
	}
	p, err := newLSTMParams(name, 1, units, peepholes, rng, newConfig(opts).dtype)
	if err != nil {
		return nil, fmt.Errorf("layers: projected lstm %q: %w", name, err)
	}
	return &ProjectedLSTM{Units: units, Reverse: reverse, U: p.U, B: p.B, P: p.P}, nil
}

// Forward returns every step's hidden state [total, H] for the gate
// projections x [total, 4H].
func (l *ProjectedLSTM) Forward(x graph.Seq) graph.Seq {
	t := x.Values.Tape()
	if t == nil {
		return x
	}
	var p *graph.Value
	if l.P != nil {
		p = t.Param(l.P)
	}
	return graph.LSTMProjected(x, t.Param(l.U), t.Param(l.B), p, l.Reverse)
}

// Params returns U, the bias and, if present, the peephole.
func (l *ProjectedLSTM) Params() []*graph.Param {
	if l.P == nil {
		return []*graph.Param{l.U, l.B}
	}
	return []*graph.Param{l.U, l.B, l.P}
}
