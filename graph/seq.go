package graph

import (
	"fmt"
	"slices"

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
// say); VarSeq does the same with a gradient. The Seq keeps its own copy
// of the offsets, so the caller may reuse r.Offsets once this returns. A
// nil r or one whose offsets do not fit its values (a Ragged built as a
// literal) gives a Seq whose Values carries the error.
func (t *Tape) ConstSeq(r *tensor.Ragged) Seq {
	if r == nil {
		return Seq{Values: t.fail(fmt.Errorf("graph: ConstSeq of a nil ragged batch"))}
	}
	return NewSeq(t.Const(r.Values), r.Offsets)
}

// VarSeq puts a ragged batch on the tape as a leaf whose gradient Backward
// computes; see ConstSeq.
func (t *Tape) VarSeq(r *tensor.Ragged) Seq {
	if r == nil {
		return Seq{Values: t.fail(fmt.Errorf("graph: VarSeq of a nil ragged batch"))}
	}
	return NewSeq(t.Var(r.Values), r.Offsets)
}

// NewSeq pairs values with a copy of offsets, checking them as
// tensor.NewRagged does; on a mistake the returned Seq's Values carries the
// error. The copy lets the caller reuse its slice for the next batch while
// the tape still needs these offsets for Backward.
func NewSeq(values *Value, offsets []int) Seq {
	offsets = slices.Clone(offsets)
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

// BatchSize is the number of sequences (0 for offsets too short to
// describe any).
func (s Seq) BatchSize() int { return max(0, len(s.Offsets)-1) }

// Lengths returns each sequence's number of steps, or nil when the offsets
// do not start at 0 and never decrease (a Seq built by hand).
func (s Seq) Lengths() []int { return (&tensor.Ragged{Offsets: s.Offsets}).Lengths() }

// With returns a Seq with the same offsets and new values of one row per
// step, the result of a per-step op such as Linear or Tanh on s.Values.
func (s Seq) With(values *Value) Seq { return Seq{Values: values, Offsets: s.Offsets} }
