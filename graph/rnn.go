package graph

import (
	"github.com/plumbml/plumb/ops"
)

// LSTMState is an LSTM's state: h and c, each [B, H].
type LSTMState struct{ H, C *Value }

// LSTMWeights are an LSTM's parameters on a tape: W [In, 4H], U [H, 4H],
// B [4H] with gate blocks i, f, c, o (Keras; see ops.LSTMOp), and an
// optional Peephole [3H] (nil for none); Candidate and Cell choose the
// candidate's and the cell output's activations (tanh when zero).
type LSTMWeights struct {
	W, U, B, Peephole *Value
	Candidate, Cell   ops.RNNActivation
}

// LSTM runs the fused LSTM (ops.LSTMOp) over the ragged batch x [total, In]
// from the initial state init (nil for zeros), forward or, with reverse,
// from each sequence's last step. It returns the hidden state of every
// step, [total, H] with x's offsets (aligned with x's rows in both
// directions), and each sequence's final state (an empty sequence keeps
// init).
func LSTM(x Seq, w LSTMWeights, init *LSTMState, reverse bool) (Seq, LSTMState) {
	in := []*Value{x.Values, w.W, w.U, w.B}
	if w.Peephole != nil {
		in = append(in, w.Peephole)
	}
	var hc0 *Value
	if init != nil {
		in = append(in, init.H, init.C)
		hc0 = Concat(1, init.H, init.C)
	}
	hc := apply(ops.LSTMOp(ops.LSTMAttrs{Offsets: x.Offsets, Reverse: reverse, Candidate: w.Candidate, Cell: w.Cell}), in...)
	if hc.err != nil {
		return x.With(hc), LSTMState{hc, hc}
	}
	h := hc.t.Dim(1) / 2
	final := RNNFinalState(x.With(hc), hc0, reverse)
	return x.With(Slice(hc, 1, 0, h)), LSTMState{Slice(final, 1, 0, h), Slice(final, 1, h, 2*h)}
}

// LSTMCell runs one LSTM step (ops.LSTMCellOp) on x [B, In] from state s.
func LSTMCell(x *Value, s LSTMState, w LSTMWeights) LSTMState {
	in := []*Value{x, s.H, s.C, w.W, w.U, w.B}
	if w.Peephole != nil {
		in = append(in, w.Peephole)
	}
	hc := apply(ops.LSTMCellActsOp(w.Candidate, w.Cell), in...)
	if hc.err != nil {
		return LSTMState{hc, hc}
	}
	h := hc.t.Dim(1) / 2
	return LSTMState{Slice(hc, 1, 0, h), Slice(hc, 1, h, 2*h)}
}

// GRUWeights are a GRU's parameters on a tape: W [In, 3H], U [H, 3H] with
// gate blocks z, r, h̃ (Keras; see ops.GRUOp) and B, [2, 3H] (input and
// recurrent rows) when ResetAfter, else [3H].
type GRUWeights struct {
	W, U, B    *Value
	ResetAfter bool
}

// GRU runs the fused GRU (ops.GRUOp) over the ragged batch x from the
// initial state h0 [B, H] (nil for zeros). It returns every step's state,
// [total, H] with x's offsets, and each sequence's final state [B, H].
func GRU(x Seq, w GRUWeights, h0 *Value, reverse bool) (Seq, *Value) {
	in := []*Value{x.Values, w.W, w.U, w.B}
	if h0 != nil {
		in = append(in, h0)
	}
	hs := apply(ops.GRUOp(ops.GRUAttrs{Offsets: x.Offsets, Reverse: reverse, ResetAfter: w.ResetAfter}), in...)
	return x.With(hs), RNNFinalState(x.With(hs), h0, reverse)
}

// GRUCell runs one GRU step (ops.GRUCellOp) on x [B, In] from state h [B, H].
//
// On an inference tape W and U are packed for the GEMM once, as Linear's
// weights are (from their second use in a step until Release), since a
// decoder steps with them many times.
func GRUCell(x, h *Value, w GRUWeights) *Value {
	op := ops.GRUCellOp(w.ResetAfter)
	if w.W != nil && w.U != nil {
		pw, pu := w.W.tape.packed(w.W), (*ops.PackedWeights)(nil)
		if w.ResetAfter { // the other form multiplies by U's blocks apart
			pu = w.U.tape.packed(w.U)
		}
		if pw != nil || pu != nil {
			op = ops.GRUCellPackedOp(w.ResetAfter, pw, pu)
		}
	}
	return apply(op, x, h, w.W, w.U, w.B)
}

// RNNFinalState returns each sequence's final state from the per-step
// states of a recurrence run forward (or with reverse, backward) over s's
// sequences; an empty sequence gives its row of init [B, S] (zeros when
// init is nil). See ops.RNNFinalStateOp.
func RNNFinalState(states Seq, init *Value, reverse bool) *Value {
	if init == nil {
		return apply(ops.RNNFinalStateOp(states.Offsets, reverse), states.Values)
	}
	return apply(ops.RNNFinalStateOp(states.Offsets, reverse), states.Values, init)
}

// LSTMProjected runs the LSTM of ops.LSTMProjectedOp over the ragged batch
// x [total, 4H], which holds each step's input projections of the gates
// (an fc layer's output, as Paddle's dynamic_lstm takes), with recurrent
// kernel u [H, 4H], bias b [4H] and an optional peephole [3H], from zero
// state, forward or with reverse from each sequence's last step. It
// returns the hidden state of every step, [total, H] with x's offsets.
func LSTMProjected(x Seq, u, b, peephole *Value, reverse bool) Seq {
	in := []*Value{x.Values, u, b}
	if peephole != nil {
		in = append(in, peephole)
	}
	hc := apply(ops.LSTMProjectedOp(ops.LSTMAttrs{Offsets: x.Offsets, Reverse: reverse}), in...)
	if hc.err != nil {
		return x.With(hc)
	}
	return x.With(Slice(hc, 1, 0, hc.t.Dim(1)/2))
}
