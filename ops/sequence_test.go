package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// mixedOffsets is the ragged batch every sequence op is checked on: lengths
// 3, 0, 1, 6 and a trailing empty sequence, 10 steps in all.
var mixedOffsets = []int{0, 3, 3, 4, 10, 10}

// seqRows returns the rows of sequence b of x [total, inner] as float64s.
func seqRows(x *tensor.Tensor, off []int, b int) [][]float64 {
	inner := x.Shape()[1:].Size()
	var rows [][]float64
	for r := off[b]; r < off[b+1]; r++ {
		row := make([]float64, inner)
		for c := range row {
			row[c] = x.At(r*inner + c)
		}
		rows = append(rows, row)
	}
	return rows
}

// fromRows stacks float64 rows of width inner into a tensor [len(rows), inner...].
func fromRows(rows [][]float64, shape ...int) *tensor.Tensor {
	var data []float64
	for _, r := range rows {
		data = append(data, r...)
	}
	return tensor.MustFromSlice(data, append([]int{len(rows)}, shape...)...)
}

// Every sequence op rejects bad offsets, naming itself and the offsets.
func TestSequenceOpsRejectBadOffsets(t *testing.T) {
	x := randn(1, 4, 2)
	for _, c := range []struct {
		off  []int
		want string
	}{
		{[]int{1, 2, 4}, "offsets [1 2 4] must start at 0"},
		{[]int{}, "offsets [] must start at 0"},
		{[]int{0, 3, 2, 4}, "offsets [0 3 2 4] decrease at 2: 2 after 3"},
		{[]int{0, 5, 5}, "offsets [0 5 5] overrun the values: offset 1 is 5 but the values have 4 rows"},
		{[]int{0, 1, 3}, "offsets [0 1 3] end at 3 but the values have 4 rows"},
	} {
		for _, op := range []Op{SequencePoolOp(SequencePoolSum, 0, c.off), SequenceReverseOp(c.off), SequenceSliceOp(c.off, nil, nil)} {
			_, err := op.Forward(ins(x))
			require.ErrorContains(t, err, op.Name()+": inputs float64[4 2]: "+c.want)
		}
		_, err := SequenceConv(x, randn(2, 2, 3), nil, c.off, 0, 1)
		require.ErrorContains(t, err, "sequence_conv: inputs float64[4 2], float64[2 3]: "+c.want)
		_, err = CRFNegLogLikelihood(x, randn(2, 2, 2), randn(3, 2), randn(4, 2), tensor.MustFromSlice([]int64{0, 1, 1, 0}, 4), c.off)
		require.ErrorContains(t, err, "crf: inputs float64[4 2], float64[2 2], float64[2], float64[2], int64[4]: "+c.want)
		_, err = SequenceConcat(x, x, c.off, []int{0, 4})
		require.ErrorContains(t, err, "sequence_concat: inputs float64[4 2], float64[4 2]: "+c.want)
		_, err = SequenceSoftmax(randn(1, 4), c.off)
		require.ErrorContains(t, err, "sequence_softmax: inputs float64[4]: "+c.want)
	}
	_, err := SequenceExpand(x, []int{0, 2, 1, 5, 6})
	require.ErrorContains(t, err, "sequence_expand: inputs float64[4 2]: offsets [0 2 1 5 6] decrease at 2: 1 after 2")
	_, err = SequenceExpand(x, []int{0, 2, 5})
	require.ErrorContains(t, err, "sequence_expand: inputs float64[4 2]: offsets [0 2 5] describe 2 sequences, want one per row of x (4)")
}
