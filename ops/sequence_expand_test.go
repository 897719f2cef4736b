package ops

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var _ = addGradCases("sequence_expand",
	gradCase{name: "mixed", attrs: Attrs{Offsets: mixedOffsets}, in: ins(randn(1, 5, 3)), wrt: []int{0}},
	gradCase{name: "rank3", attrs: Attrs{Offsets: []int{0, 2, 2, 3}}, in: ins(randn(2, 3, 2, 2)), wrt: []int{0}},
)

func TestSequenceExpandForward(t *testing.T) {
	x := randn(3, 5, 3)
	got, err := SequenceExpand(x, mixedOffsets)
	require.NoError(t, err)
	var want [][]float64
	for b := 0; b < 5; b++ {
		row := seqRows(x, []int{0, 1, 2, 3, 4, 5}, b)[0]
		for range mixedOffsets[b+1] - mixedOffsets[b] {
			want = append(want, row)
		}
	}
	requireClose(t, fromRows(want, 3), got, 0, 0)
	checkDTypes(t, func() Op { return SequenceExpandOp(mixedOffsets) }, x)
}
