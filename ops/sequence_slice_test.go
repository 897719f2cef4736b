package ops

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	sliceStarts  = []int{1, 0, 0, 2, 0}
	sliceLengths = []int{2, 0, 1, 3, 0}
)

var _ = addGradCases("sequence_slice",
	gradCase{name: "mixed", attrs: Attrs{Offsets: mixedOffsets, Starts: sliceStarts, Lengths: sliceLengths}, in: ins(randn(1, 10, 3)), wrt: []int{0}},
)

func TestSequenceSliceForward(t *testing.T) {
	x := randn(3, 10, 2)
	got, err := SequenceSlice(x, mixedOffsets, sliceStarts, sliceLengths)
	require.NoError(t, err)
	var want [][]float64
	for b := 0; b+1 < len(mixedOffsets); b++ {
		want = append(want, seqRows(x, mixedOffsets, b)[sliceStarts[b]:sliceStarts[b]+sliceLengths[b]]...)
	}
	requireClose(t, fromRows(want, 2), got, 0, 0)
	checkDTypes(t, func() Op { return SequenceSliceOp(mixedOffsets, sliceStarts, sliceLengths) }, x)
}

func TestSequenceSliceErrors(t *testing.T) {
	x := randn(1, 10, 2)
	for _, c := range []struct {
		starts, lengths []int
		want            string
	}{
		{[]int{1, 0, 0, 2, 0}, []int{3, 0, 1, 3, 0}, "sequence 0 of length 3: start 1, length 3 out of range"},
		{[]int{0, 1, 0, 0, 0}, []int{0, 0, 1, 3, 0}, "sequence 1 of length 0: start 1, length 0 out of range"},
		{[]int{0, 0, 0, -1, 0}, []int{0, 0, 1, 3, 0}, "sequence 3 of length 6: start -1, length 3 out of range"},
		{[]int{0, 0, 0, 0, 0}, []int{0, 0, -1, 3, 0}, "sequence 2 of length 1: start 0, length -1 out of range"},
		{[]int{0, 0}, []int{0, 0}, "2 starts and 2 lengths for 5 sequences"},
	} {
		_, err := SequenceSlice(x, mixedOffsets, c.starts, c.lengths)
		require.ErrorContains(t, err, "sequence_slice: inputs float64[10 2]: "+c.want)
	}
}
