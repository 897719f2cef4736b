package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A network through every sequence wrapper, on sequences of lengths 3, 0,
// 1, 6, 0, agrees with central differences for every input.
func TestSequenceWrappersGradientMatchesNumeric(t *testing.T) {
	off := []int{0, 3, 3, 4, 10, 10}
	ids := tensor.MustFromSlice([]int64{0, 2, 5, 1, 2, 3, 4, 5, 0, 1, 2, 2, 3}, 13)
	tags := tensor.MustFromSlice([]int32{0, 1, 2, 2, 1, 0, 0, 1, 2, 1, 1, 0, 2}, 13)
	in := []*tensor.Tensor{randn(1, 10, 2), randn(2, 5, 2), randn(3, 6, 3), randn(4, 2, 2), randn(5, 6, 3), randn(6, 3, 3), randn(7, 3), randn(8, 3)}
	checkNetGradients(t, in, func(vs []*Value) *Value {
		s := NewSeq(vs[0], off)
		c := SequenceConcat(SequenceReverse(s), SequenceExpand(vs[1], s)) // lengths 6, 0, 2, 12, 0
		c = SequenceSlice(c, []int{1, 0, 0, 3, 0}, []int{4, 0, 2, 7, 0})
		conv := SequenceConv(c, vs[2], vs[3], -1, 3)
		em := conv.With(Add(conv.Values, Embedding(vs[4], ids, 2)))
		loss := Sum(CRFNegLogLikelihood(em, vs[5], vs[6], vs[7], tags))
		sm := SequenceSoftmax(em.With(Slice(em.Values, 1, 0, 1)))
		loss = Add(loss, Sum(Mul(sm.Values, Slice(em.Values, 1, 1, 2))))
		return Add(loss, Sum(SequencePool(em, ops.SequencePoolSqrt, 0.5)))
	})
}

func TestSequenceWrappersShapesAndOffsets(t *testing.T) {
	tape := NewTape()
	s := NewSeq(tape.Var(randn(1, 4, 2)), []int{0, 1, 1, 4})
	c := SequenceConcat(s, s)
	require.NoError(t, c.Err())
	require.Equal(t, []int{0, 2, 2, 8}, c.Offsets)
	sl := SequenceSlice(c, []int{1, 0, 2}, []int{1, 0, 3})
	require.Equal(t, []int{0, 1, 1, 4}, sl.Offsets)
	require.Equal(t, tensor.Shape{4, 2}, sl.Values.Shape())
	require.Equal(t, s.Offsets, SequenceReverse(s).Offsets)
	require.Equal(t, tensor.Shape{3, 2}, SequencePool(s, ops.SequencePoolLast, 0).Shape())
	conv := SequenceConv(s, tape.Var(randn(2, 4, 5)), nil, 0, 2)
	require.Equal(t, tensor.Shape{4, 5}, conv.Values.Shape())
	require.Equal(t, tensor.Shape{2, 3, 2}, Embedding(tape.Var(randn(3, 4, 2)), tensor.MustFromSlice([]int64{0, 1, 2, 3, 0, 1}, 2, 3), ops.NoPadding).Shape())
}

func TestSequenceWrappersFailWithoutPanic(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.Zeros(tensor.Float32, 4, 2))
	bad := Seq{Values: x, Offsets: []int{0, 3, 2, 4}}
	require.ErrorContains(t, SequencePool(bad, ops.SequencePoolMax, 0).Err(), "sequence_pool: inputs float32[4 2]: offsets [0 3 2 4] decrease at 2: 2 after 3")
	require.Equal(t, tape.Err(), SequencePool(bad, ops.SequencePoolMax, 0).Err(), "the tape keeps the first error")
	good := Seq{Values: x, Offsets: []int{0, 4}}
	require.ErrorContains(t, SequenceConcat(good, Seq{Values: x, Offsets: []int{0, 1, 4}}).Err(), "sequence_concat: offsets [0 4] and [0 1 4] describe different numbers of sequences")
	require.ErrorContains(t, SequenceSlice(good, []int{2}, []int{3}).Err(), "sequence_slice: inputs float32[4 2]: sequence 0 of length 4: start 2, length 3 out of range")
	require.ErrorContains(t, SequenceSlice(good, []int{0}, []int{-1}).Err(), "length -1 out of range")
	require.ErrorContains(t, Embedding(x, nil, 0).Err(), "embedding: nil tensor input")
	require.ErrorContains(t, Embedding(nil, tensor.MustFromSlice([]int64{1}, 1), 0).Err(), "embedding")
	require.ErrorContains(t, CRFNegLogLikelihood(good, x, x, x, nil).Err(), "crf: nil tensor input")
	require.ErrorContains(t, SequenceExpand(nil, good).Err(), "sequence_expand")
	require.ErrorContains(t, SequenceSoftmax(good).Err(), "sequence_softmax: inputs float32[4 2]: want x [total] or [total, 1]")
	failedSeq := good.With(Add(x, tape.Var(tensor.Zeros(tensor.Float32, 3))))
	for _, s := range []Seq{SequenceReverse(failedSeq), SequenceConcat(failedSeq, good), SequenceConv(failedSeq, x, nil, 0, 1)} {
		require.ErrorIs(t, s.Err(), failedSeq.Err(), "a failed input passes its error on")
	}
}
