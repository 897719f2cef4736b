package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var concatOffB = []int{0, 0, 2, 3, 4, 5}

var _ = addGradCases("sequence_concat",
	gradCase{name: "mixed", attrs: Attrs{Offsets: mixedOffsets, OffsetsB: concatOffB}, in: ins(randn(1, 10, 3), randn(2, 5, 3)), wrt: []int{0, 1}},
)

func TestSequenceConcatForward(t *testing.T) {
	a, b := randn(3, 10, 2), randn(4, 5, 2)
	got, err := SequenceConcat(a, b, mixedOffsets, concatOffB)
	require.NoError(t, err)
	var want [][]float64
	for i := 0; i+1 < len(mixedOffsets); i++ {
		want = append(append(want, seqRows(a, mixedOffsets, i)...), seqRows(b, concatOffB, i)...)
	}
	requireClose(t, fromRows(want, 2), got, 0, 0)
	off, err := SequenceConcatOffsets(mixedOffsets, concatOffB)
	require.NoError(t, err)
	require.Equal(t, []int{0, 3, 5, 7, 14, 15}, off)
	checkDTypes(t, func() Op { return SequenceConcatOp(mixedOffsets, concatOffB) }, a, b)
}

func TestSequenceConcatErrors(t *testing.T) {
	_, err := SequenceConcat(randn(1, 3, 2), randn(1, 2, 2), []int{0, 3}, []int{0, 1, 2})
	require.ErrorContains(t, err, "sequence_concat: inputs float64[3 2], float64[2 2]: offsets [0 3] and [0 1 2] describe different numbers of sequences")
	_, err = SequenceConcat(randn(1, 3, 2), randn(1, 2, 3), []int{0, 3}, []int{0, 2})
	require.ErrorContains(t, err, "sequence_concat: inputs float64[3 2], float64[2 3]: want a [ta, D...] and b [tb, D...] with the same D...")
	_, err = SequenceConcat(randn(1, 3, 2), f32(randn(1, 2, 2)), []int{0, 3}, []int{0, 2})
	require.ErrorContains(t, err, "sequence_concat: inputs float64[3 2], float32[2 2]: want float32 or float64 inputs of one dtype")
	_, err = SequenceConcatOffsets([]int{0}, []int{0, 1})
	require.ErrorContains(t, err, "different numbers of sequences")
	_, err = SequenceConcat(tensor.Scalar(1.0), tensor.Scalar(1.0), []int{0}, []int{0})
	require.ErrorContains(t, err, "want a [ta, D...]")
}
