package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

func TestSeq(t *testing.T) {
	tape := NewTape()
	r, err := tensor.NewRagged(tensor.Zeros(tensor.Float64, 4, 2), []int{0, 1, 1, 4})
	require.NoError(t, err)
	s := tape.VarSeq(r)
	require.NoError(t, s.Err())
	require.Equal(t, []int{1, 0, 3}, s.Lengths())
	require.Equal(t, 3, s.BatchSize())
	y := s.With(Tanh(s.Values))
	require.Equal(t, s.Offsets, y.Offsets)

	bad := NewSeq(tape.Const(tensor.Zeros(tensor.Float64, 4, 2)), []int{0, 3, 2, 4})
	require.ErrorContains(t, bad.Err(), "decrease")
	require.ErrorContains(t, NewSeq(nil, []int{0}).Err(), "nil")
	require.NoError(t, NewSeq(tape.Const(tensor.Zeros(tensor.Float64, 4, 2)), []int{0, 4}).Err())
}

// The tape keeps its own copy of a batch's offsets: a caller that rewrites
// its slice with the next (valid) batch's offsets between Forward and
// Backward changes nothing (it made the LSTM's Backward index out of range).
func TestSeqOffsetsAreCopied(t *testing.T) {
	rng := tensor.NewRNG(3)
	x, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, 5, 2)
	require.NoError(t, err)
	w, err := tensor.RandNormal(rng, tensor.Float64, 0, 0.5, 2, 12)
	require.NoError(t, err)
	u, err := tensor.RandNormal(rng, tensor.Float64, 0, 0.5, 3, 12)
	require.NoError(t, err)
	build := map[string]func(tape *Tape, xv *Value, off []int) Seq{
		"NewSeq":  func(tape *Tape, xv *Value, off []int) Seq { return NewSeq(xv, off) },
		"literal": func(tape *Tape, xv *Value, off []int) Seq { return Seq{Values: xv, Offsets: off} },
		"ConstSeq": func(tape *Tape, _ *Value, off []int) Seq {
			r := &tensor.Ragged{Values: x, Offsets: off}
			s := tape.ConstSeq(r)
			return Seq{Values: Mul(s.Values, tape.Var(x)), Offsets: s.Offsets} // a gradient path to the Var below
		},
	}
	grads := func(name string, mutate bool) []float64 {
		tape := NewTape()
		xv := tape.Var(x)
		off := []int{0, 1, 5}
		s := build[name](tape, xv, off)
		wv, uv, bv := tape.Var(w), tape.Var(u), tape.Const(tensor.Zeros(tensor.Float64, 12))
		hs, final := LSTM(s, LSTMWeights{W: wv, U: uv, B: bv}, nil, false)
		loss := Add(Sum(Mul(hs.Values, hs.Values)), Add(Sum(final.H), Sum(SequencePool(hs, ops.SequencePoolMax, 0))))
		if mutate {
			copy(off, []int{0, 4, 5}) // the next batch, reusing the slice
		}
		require.NoError(t, tape.Backward(loss), name)
		return append(append([]float64{}, wv.Grad().Float64s()...), uv.Grad().Float64s()...)
	}
	for name := range build {
		want := grads(name, false)
		require.NotPanics(t, func() { require.Equal(t, want, grads(name, true), name) }, name)
	}
}
