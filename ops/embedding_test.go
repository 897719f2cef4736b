package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("embedding",
	gradCase{name: "repeats", attrs: Attrs{PaddingIdx: NoPadding}, in: ins(randn(1, 5, 3), tensor.MustFromSlice([]int64{4, 0, 4, 2, 4}, 5)), wrt: []int{0}},
	gradCase{name: "padding_rank2_int32", attrs: Attrs{PaddingIdx: 1}, in: ins(randn(2, 4, 2), tensor.MustFromSlice([]int32{1, 3, 1, 0, 3, 1}, 2, 3)), wrt: []int{0}},
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

// SparseGrad's rows and values, scattered into zeros, are exactly
// Backward's dense gradient: padding excluded, repeated ids summed.
func TestEmbeddingSparseGradMatchesDense(t *testing.T) {
	cases := []struct {
		name    string
		table   *tensor.Tensor
		ids     *tensor.Tensor
		padding int
		rows    []int
	}{
		{"repeats", randn(4, 7, 3), tensor.MustFromSlice([]int64{5, 0, 5, 2, 5, 0}, 2, 3), NoPadding, []int{0, 2, 5}},
		{"padding", randn(5, 6, 2), tensor.MustFromSlice([]int32{4, 1, 4, 0, 1, 1}, 6), 1, []int{0, 4}},
		{"only_padding", randn(6, 3, 2), tensor.MustFromSlice([]int64{2, 2}, 2), 2, []int{}},
		{"no_ids", randn(7, 3, 2), tensor.Zeros(tensor.Int64, 0), NoPadding, []int{}},
	}
	for _, c := range cases {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			table := c.table
			if dt == tensor.Float32 {
				table = f32(table)
			}
			op := EmbeddingOp(c.padding)
			y, err := op.Forward(ins(table, c.ids))
			require.NoError(t, err, c.name)
			gout := randn(8, y.Shape()...)
			if dt == tensor.Float32 {
				gout = f32(gout)
			}
			dense, err := op.Backward(ins(table, c.ids), y, gout, []bool{true, false})
			require.NoError(t, err, c.name)
			rows, vals, ok := op.(SparseGrader).SparseGrad(ins(table, c.ids), gout, 0)
			require.True(t, ok, c.name)
			require.Equal(t, c.rows, rows, c.name)
			d := table.Dim(1)
			require.Equal(t, tensor.Shape{len(rows), d}, vals.Shape(), c.name)
			scattered := tensor.ZerosLike(table)
			for k, r := range rows {
				for j := range d {
					scattered.SetAt(r*d+j, vals.At(k*d+j))
				}
			}
			require.Equal(t, values64(dense[0]), values64(scattered), "%s %v: bit-identical to Backward", c.name, dt)
			_, _, ok = op.(SparseGrader).SparseGrad(ins(table, c.ids), gout, 1)
			require.False(t, ok, "the ids have no gradient")
		}
	}
}

func values64(x *tensor.Tensor) []float64 {
	out := make([]float64, x.Size())
	for i := range out {
		out[i] = x.At(i)
	}
	return out
}
