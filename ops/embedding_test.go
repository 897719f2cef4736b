package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("embedding",
	gradCase{name: "repeats", mk: func() Op { return EmbeddingOp(NoPadding) }, in: ins(randn(1, 5, 3), tensor.MustFromSlice([]int64{4, 0, 4, 2, 4}, 5)), wrt: []int{0}},
	gradCase{name: "padding_rank2_int32", mk: func() Op { return EmbeddingOp(1) }, in: ins(randn(2, 4, 2), tensor.MustFromSlice([]int32{1, 3, 1, 0, 3, 1}, 2, 3)), wrt: []int{0}},
)

func TestEmbeddingForward(t *testing.T) {
	table := randn(3, 6, 4)
	ids := tensor.MustFromSlice([]int64{5, 2, 2, 0, 3, 2}, 3, 2)
	for _, pad := range []int{NoPadding, 2, 1} {
		got, err := Embedding(table, ids, pad)
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{3, 2, 4}, got.Shape())
		var want [][]float64
		for _, id := range []int{5, 2, 2, 0, 3, 2} {
			row := make([]float64, 4)
			if id != pad {
				row = seqRows(table, []int{id, id + 1}, 0)[0]
			}
			want = append(want, row)
		}
		requireClose(t, fromRows(want, 4), mustReshape(t, got, 6, 4), 0, 0)
		checkDTypes(t, func() Op { return EmbeddingOp(pad) }, table, ids)
	}
	// A scalar id gives one row [D]; no ids give [0, D].
	got, err := Embedding(table, tensor.Scalar[int32](4), NoPadding)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{4}, got.Shape())
	got, err = Embedding(table, tensor.Zeros(tensor.Int64, 0), NoPadding)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0, 4}, got.Shape())
}

func mustReshape(t *testing.T, x *tensor.Tensor, shape ...int) *tensor.Tensor {
	r, err := x.Reshape(shape...)
	require.NoError(t, err)
	return r
}

// The gradient touches only the looked-up rows, never the padding row.
func TestEmbeddingGradIsSparse(t *testing.T) {
	table := randn(1, 6, 2)
	ids := tensor.MustFromSlice([]int64{4, 1, 4, 0}, 4)
	op := EmbeddingOp(0)
	y, err := op.Forward(ins(table, ids))
	require.NoError(t, err)
	g, err := op.Backward(ins(table, ids), y, tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2), []bool{true, false})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 0, 3, 4, 0, 0, 0, 0, 6, 8, 0, 0}, g[0].Float64s())
	require.Nil(t, g[1])
	rows, err := EmbeddingRows(ids, 0)
	require.NoError(t, err)
	require.Equal(t, []int{1, 4}, rows)
}

func TestEmbeddingErrors(t *testing.T) {
	table := tensor.Zeros(tensor.Float32, 4, 3)
	_, err := Embedding(table, tensor.MustFromSlice([]int64{1, 4}, 2), NoPadding)
	require.ErrorContains(t, err, "embedding: inputs float32[4 3], int64[2]: id 4 at position 1 out of range [0, 4)")
	_, err = Embedding(table, tensor.MustFromSlice([]int32{-1}, 1), NoPadding)
	require.ErrorContains(t, err, "embedding: inputs float32[4 3], int32[1]: id -1 at position 0 out of range [0, 4)")
	_, err = Embedding(table, tensor.MustFromSlice([]float32{1}, 1), NoPadding)
	require.ErrorContains(t, err, "embedding: inputs float32[4 3], float32[1]: want int32 or int64 ids")
	_, err = Embedding(tensor.Zeros(tensor.Float32, 4), tensor.MustFromSlice([]int64{1}, 1), NoPadding)
	require.ErrorContains(t, err, "embedding: inputs float32[4], int64[1]: want a float32 or float64 table [V, D]")
	_, err = Embedding(table, nil, NoPadding)
	require.ErrorContains(t, err, "embedding: inputs float32[4 3], nil: nil input")
	_, err = EmbeddingRows(table, NoPadding)
	require.ErrorContains(t, err, "embedding: inputs float32[4 3]: want int32 or int64 ids")
}
