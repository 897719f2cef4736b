package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("sequence_softmax",
	gradCase{name: "mixed", attrs: Attrs{Offsets: mixedOffsets}, in: ins(randn(1, 10)), wrt: []int{0}},
	gradCase{name: "column", attrs: Attrs{Offsets: []int{0, 1, 4}}, in: ins(randn(2, 4, 1)), wrt: []int{0}},
)

func TestSequenceSoftmaxForward(t *testing.T) {
	x := randn(3, 10, 1)
	got, err := SequenceSoftmax(x, mixedOffsets)
	require.NoError(t, err)
	var want []float64
	for b := 0; b+1 < len(mixedOffsets); b++ {
		want = append(want, plainSoftmax(x.Float64s()[mixedOffsets[b]:mixedOffsets[b+1]])...)
	}
	requireClose(t, tensor.MustFromSlice(want, 10, 1), got, 1e-15, 1e-12)
	checkDTypes(t, func() Op { return SequenceSoftmaxOp(mixedOffsets) }, x)
	// Large logits stay finite; a length-1 sequence is 1.
	got, err = SequenceSoftmax(tensor.MustFromSlice([]float32{1000, 1000, 7}, 3), []int{0, 2, 3})
	require.NoError(t, err)
	require.Equal(t, []float32{0.5, 0.5, 1}, got.Float32s())
}

func TestSequenceSoftmaxErrors(t *testing.T) {
	_, err := SequenceSoftmax(randn(1, 4, 2), []int{0, 4})
	require.ErrorContains(t, err, "sequence_softmax: inputs float64[4 2]: want x [total] or [total, 1]")
	_, err = SequenceSoftmax(tensor.Scalar(1.0), []int{0})
	require.ErrorContains(t, err, "sequence_softmax: inputs float64[]: want x [total] or [total, 1]")
}
