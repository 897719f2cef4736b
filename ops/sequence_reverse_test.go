package ops

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

var _ = addGradCases("sequence_reverse",
	gradCase{name: "mixed", attrs: Attrs{Offsets: mixedOffsets}, in: ins(randn(1, 10, 3)), wrt: []int{0}},
)

func TestSequenceReverseForward(t *testing.T) {
	x := randn(3, 10, 2)
	got, err := SequenceReverse(x, mixedOffsets)
	require.NoError(t, err)
	var want [][]float64
	for b := 0; b+1 < len(mixedOffsets); b++ {
		rows := seqRows(x, mixedOffsets, b)
		slices.Reverse(rows)
		want = append(want, rows...)
	}
	requireClose(t, fromRows(want, 2), got, 0, 0)
	twice, err := SequenceReverse(got, mixedOffsets)
	require.NoError(t, err)
	requireClose(t, x, twice, 0, 0)
	checkDTypes(t, func() Op { return SequenceReverseOp(mixedOffsets) }, x)
}
