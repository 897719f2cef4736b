package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
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

// NewProjectedLSTM returns a ProjectedLSTM of cfg.Units hidden units,
// running in reverse with cfg.Reverse and with peepholes with
// cfg.Peepholes, whose parameters are named name/recurrent_kernel,
// name/bias (and name/peephole). cfg.In is 4·Units or 0 (the input is the
// gates' projection); a single layer and direction with tanh activations
// is all it runs, so other settings of cfg are an error.
func NewProjectedLSTM(name string, cfg RNNConfig, rng *rand.Rand, opts ...Option) (*ProjectedLSTM, error) {
	units := cfg.Units
	if units <= 0 || (cfg.In != 0 && cfg.In != 4*units) {
		return nil, fmt.Errorf("layers: projected lstm %q: units=%d in=%d: want positive units and in 0 or 4·units", name, units, cfg.In)
	}
	if cfg.layers() != 1 || cfg.Bidirectional || cfg.ResetAfter || cfg.Candidate != ops.ActTanh || cfg.Cell != ops.ActTanh {
		return nil, fmt.Errorf("layers: projected lstm %q: config %+v: it runs one layer in one direction with tanh activations", name, cfg)
	}
	p, err := newLSTMParams(name, 1, units, cfg.Peepholes, rng, newConfig(opts).dtype)
	if err != nil {
		return nil, fmt.Errorf("layers: projected lstm %q: %w", name, err)
	}
	return &ProjectedLSTM{Units: units, Reverse: cfg.Reverse, U: p.U, B: p.B, P: p.P}, nil
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
	return outSeq("projected lstm", l, x.Values.Err(), graph.LSTMProjected(x, t.Param(l.U), t.Param(l.B), p, l.Reverse))
}

// Params returns U, the bias and, if present, the peephole.
func (l *ProjectedLSTM) Params() []*graph.Param {
	if l.P == nil {
		return []*graph.Param{l.U, l.B}
	}
	return []*graph.Param{l.U, l.B, l.P}
}
