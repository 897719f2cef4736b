package graph

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// Seq is a ragged batch on a tape: Values [total_steps, D...] holds every
// step of every sequence, and sequence b is rows Offsets[b] to
// Offsets[b+1] (Paddle's level-1 LoD; see tensor.Ragged). Gradients flow
// through Values; the offsets are structure, not data.
type Seq struct {
	Values  *Value
	Offsets []int
}

// ConstSeq puts a ragged batch on the tape as a constant (token features,
// say); VarSeq does the same with a gradient.
func (t *Tape) ConstSeq(r *tensor.Ragged) Seq {
	return Seq{Values: t.Const(r.Values), Offsets: r.Offsets}
}

// VarSeq puts a ragged batch on the tape as a leaf whose gradient Backward computes.
func (t *Tape) VarSeq(r *tensor.Ragged) Seq { return Seq{Values: t.Var(r.Values), Offsets: r.Offsets} }

// NewSeq pairs values with offsets, checking them as tensor.NewRagged does;
// on a mistake the returned Seq's Values carries the error.
func NewSeq(values *Value, offsets []int) Seq {
	if values == nil || values.err != nil {
		return Seq{Values: failed(values, fmt.Errorf("graph: NewSeq of a nil or failed value")), Offsets: offsets}
	}
	if err := values.Err(); err != nil { // released
		return Seq{Values: failed(values, err), Offsets: offsets}
	}
	if _, err := tensor.NewRagged(values.t, offsets); err != nil {
		return Seq{Values: failed(values, err), Offsets: offsets}
	}
	return Seq{Values: values, Offsets: offsets}
}

// Err returns the error carried by the values, if any.
func (s Seq) Err() error {
	if s.Values == nil {
		return fmt.Errorf("graph: Seq with nil values")
	}
	return s.Values.Err()
}

// BatchSize is the number of sequences.
func (s Seq) BatchSize() int { return len(s.Offsets) - 1 }

// Lengths returns each sequence's number of steps.
func (s Seq) Lengths() []int {
	l := make([]int, s.BatchSize())
	for i := range l {
		l[i] = s.Offsets[i+1] - s.Offsets[i]
	}
	return l
}

// With returns a Seq with the same offsets and new values of one row per
// step, the result of a per-step op such as Linear or Tanh on s.Values.
func (s Seq) With(values *Value) Seq { return Seq{Values: values, Offsets: s.Offsets} }
