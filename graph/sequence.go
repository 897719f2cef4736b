package graph

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The graph forms of the ragged sequence ops, the embedding lookup and the
// CRF loss. Ops that keep one row per step return a Seq with the offsets
// of their result; ops that pool a sequence into one row return a *Value
// [B, ...]. Each op checks the offsets against the values, so a Seq built
// by hand with bad offsets fails at its first op, naming it.

// SequencePool pools each sequence of s into one row, giving [B, D...]:
// kind is sum, average, sqrt, max, first or last, and an empty sequence
// yields pad (Paddle's sequence_pool; see ops.SequencePoolOp).
func SequencePool(s Seq, kind ops.SequencePoolType, pad float64) *Value {
	return apply(ops.SequencePoolOp(kind, pad, s.Offsets), s.Values)
}

// SequenceSoftmax takes the softmax over the steps of each sequence of s,
// whose values are [total] or [total, 1] (ops.SequenceSoftmaxOp).
func SequenceSoftmax(s Seq) Seq { return s.With(apply(ops.SequenceSoftmaxOp(s.Offsets), s.Values)) }

// SequenceExpand repeats row b of x [B, D...] over every step of sequence b
// of like, giving a Seq with like's offsets (ops.SequenceExpandOp).
func SequenceExpand(x *Value, like Seq) Seq {
	return like.With(apply(ops.SequenceExpandOp(like.Offsets), x))
}

// SequenceConcat joins a and b sequence by sequence along time: sequence i
// of the result is a's sequence i then b's (ops.SequenceConcatOp).
func SequenceConcat(a, b Seq) Seq {
	off, err := ops.SequenceConcatOffsets(a.Offsets, b.Offsets)
	if err != nil {
		return Seq{Values: failed(a.Values, err)}
	}
	return Seq{Values: apply(ops.SequenceConcatOp(a.Offsets, b.Offsets), a.Values, b.Values), Offsets: off}
}

// SequenceReverse reverses each sequence of s in time (ops.SequenceReverseOp).
func SequenceReverse(s Seq) Seq { return s.With(apply(ops.SequenceReverseOp(s.Offsets), s.Values)) }

// SequenceSlice keeps steps starts[b] to starts[b]+lengths[b] of each
// sequence b of s (Paddle's sequence_slice; ops.SequenceSliceOp).
func SequenceSlice(s Seq, starts, lengths []int) Seq {
	v := apply(ops.SequenceSliceOp(s.Offsets, starts, lengths), s.Values)
	if v.err != nil {
		return Seq{Values: v}
	}
	off, _ := tensor.OffsetsFromLengths(lengths) // the op checked the lengths
	return Seq{Values: v, Offsets: off}
}

// SequenceConv is Paddle's sequence_conv over s [total, D]: a window of
// contextLength steps from contextStart around each step, within its
// sequence, times filter [contextLength·D, out]. Steps outside the
// sequence are zero when padding is nil, else rows of the trainable
// padding [upPad+downPad, D] (ops.SequenceConvOp, ops.SequenceConvPadRows).
func SequenceConv(s Seq, filter, padding *Value, contextStart, contextLength int) Seq {
	op := ops.SequenceConvOp(s.Offsets, contextStart, contextLength)
	if padding == nil {
		return s.With(apply(op, s.Values, filter))
	}
	return s.With(apply(op, s.Values, filter, padding))
}

// SequenceConvPoolMax is SequencePool(SequenceConv(s, ...), max, 0) as one
// op, whose backward touches only each column's maximum step
// (ops.SequenceConvPoolMaxOp): [B, out], 0 for an empty sequence.
func SequenceConvPoolMax(s Seq, filter, padding *Value, contextStart, contextLength int) *Value {
	op := ops.SequenceConvPoolMaxOp(s.Offsets, contextStart, contextLength)
	if padding == nil {
		return apply(op, s.Values, filter)
	}
	return apply(op, s.Values, filter, padding)
}

// Embedding looks up the int32 or int64 ids (any shape) in table [V, D],
// giving [ids..., D]; ids equal to paddingIdx (ops.NoPadding for none)
// give zero rows and no gradient. A table that is a parameter (Tape.Param)
// gets a sparse gradient, only the looked-up rows (Param.SparseGrad),
// unless it is also used densely on the tape; a Var table's Value.Grad is
// dense [V, D], zero outside the looked-up rows (ops.EmbeddingOp,
// ops.EmbeddingRows).
func Embedding(table *Value, ids *tensor.Tensor, paddingIdx int) *Value {
	return apply(ops.EmbeddingOp(paddingIdx), table, constIn("embedding", table, ids))
}

// CRFNegLogLikelihood returns the linear-chain CRF negative log-likelihood
// [B] of each sequence of emission scores [total, K] given the gold tags
// [total] (int32 or int64), with transitions [K, K] (tag i → tag j), start
// [K] and stop [K] weights; an empty sequence has NLL 0. Take Mean of it
// for a batch loss (ops.CRFOp).
func CRFNegLogLikelihood(emissions Seq, transitions, start, stop *Value, tags *tensor.Tensor) *Value {
	return apply(ops.CRFOp(emissions.Offsets), emissions.Values, transitions, start, stop, constIn("crf", emissions.Values, tags))
}
