package data

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// toyDataset has n examples: "x" [n, 2] float32 with row i = {i, -i},
// "y" [n] int64 = i, and "seq" ragged int64 where sequence i is i%4+1 copies of i,
// so every batch row can be traced back to its example.
func toyDataset(t testing.TB, n int) *Dataset {
	t.Helper()
	x := make([]float32, 2*n)
	y := make([]int64, n)
	seqs := make([][]int64, n)
	for i := range n {
		x[2*i], x[2*i+1] = float32(i), float32(-i)
		y[i] = int64(i)
		for range i%4 + 1 {
			seqs[i] = append(seqs[i], int64(i))
		}
	}
	ds, err := NewDataset(DenseField("x", tensor.MustFromSlice(x, n, 2)), DenseField("y", tensor.MustFromSlice(y, n)), SeqField("seq", seqs))
	require.NoError(t, err)
	return ds
}

// batchIDs checks that each row of every field of b belongs to the same
// example and returns the examples' ids.
func batchIDs(t testing.TB, b *Batch) []int {
	t.Helper()
	ids, err := b.Tensor("y").Ints()
	require.NoError(t, err)
	require.Equal(t, b.Len(), len(ids))
	require.Equal(t, ids, b.Index(), "Index names the dataset rows")
	x := b.Tensor("x").Float32s()
	seq := b.Ragged("seq")
	require.Equal(t, len(ids), seq.BatchSize())
	for r, id := range ids {
		assert.Equal(t, []float32{float32(id), float32(-id)}, x[2*r:2*r+2], "row %d", r)
		s, err := seq.Seq(r)
		require.NoError(t, err)
		want := make([]int64, id%4+1)
		for k := range want {
			want[k] = int64(id)
		}
		assert.Equal(t, want, s.Int64s(), "sequence %d", r)
	}
	return ids
}

func TestNewDataset(t *testing.T) {
	ragged := SeqField("r", [][]int64{{1}, {2, 3}, {}})
	tests := []struct {
		name    string
		fields  []Field
		wantErr string
		wantN   int
	}{
		{name: "dense and ragged", fields: []Field{DenseField("a", tensor.Zeros(tensor.Float32, 3, 2)), ragged}, wantN: 3},
		{name: "empty", fields: []Field{DenseField("a", tensor.Zeros(tensor.Float32, 0, 4))}, wantN: 0},
		{name: "no fields", wantErr: "at least one field"},
		{name: "count mismatch", fields: []Field{DenseField("a", tensor.Zeros(tensor.Float32, 2, 4)), ragged},
			wantErr: `field "r" has 3 examples but field "a" has 2`},
		{name: "scalar", fields: []Field{DenseField("a", tensor.Scalar(int64(1)))}, wantErr: "want an example axis"},
		{name: "nil", fields: []Field{{Name: "a"}}, wantErr: "exactly one of Dense and Ragged"},
		{name: "both", fields: []Field{{Name: "a", Dense: tensor.Zeros(tensor.Int64, 1), Ragged: ragged.Ragged}}, wantErr: "exactly one"},
		{name: "no name", fields: []Field{DenseField("", tensor.Zeros(tensor.Int64, 1))}, wantErr: "no name"},
		{name: "twice", fields: []Field{DenseField("a", tensor.Zeros(tensor.Int64, 1)), DenseField("a", tensor.Zeros(tensor.Int64, 1))}, wantErr: "given twice"},
		{name: "bad offsets", fields: []Field{RaggedField("r", &tensor.Ragged{Values: tensor.Zeros(tensor.Int64, 3), Offsets: []int{0, 2}})},
			wantErr: `ragged field "r"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := NewDataset(tc.fields...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantN, ds.Len())
			for _, f := range tc.fields {
				if f.Dense != nil {
					assert.Same(t, f.Dense, ds.Tensor(f.Name))
					assert.Nil(t, ds.Ragged(f.Name))
				} else {
					assert.Equal(t, f.Ragged.Offsets, ds.Ragged(f.Name).Offsets)
					assert.Nil(t, ds.Tensor(f.Name))
				}
			}
		})
	}
}

func TestSeqFieldAndNames(t *testing.T) {
	f := SeqField("w", [][]float32{{1, 2}, nil, {3}})
	assert.Equal(t, []int{0, 2, 2, 3}, f.Ragged.Offsets)
	assert.Equal(t, []float32{1, 2, 3}, f.Ragged.Values.Float32s())
	ds := toyDataset(t, 3)
	assert.Equal(t, []string{"x", "y", "seq"}, ds.Names())
	assert.Nil(t, ds.Tensor("nope"))
	assert.Nil(t, ds.Ragged("nope"))
}

func TestTake(t *testing.T) {
	ds := toyDataset(t, 5)
	for _, tc := range []struct{ n, want int }{{3, 3}, {5, 5}, {9, 5}, {0, 0}, {-1, 0}} {
		sub := ds.Take(tc.n)
		assert.Equal(t, tc.want, sub.Len(), "Take(%d)", tc.n)
		assert.Equal(t, tc.want, sub.Tensor("y").Dim(0))
		assert.Equal(t, tc.want, sub.Ragged("seq").BatchSize())
		_, err := tensor.NewRagged(sub.Ragged("seq").Values, sub.Ragged("seq").Offsets)
		require.NoError(t, err)
	}
	ds.Take(2).Tensor("x").SetAt(0, 50)
	assert.Equal(t, 50.0, ds.Tensor("x").At(0), "Take returns views")
}

func TestSubset(t *testing.T) {
	ds := toyDataset(t, 6)
	sub, err := ds.Subset([]int{4, 0, 4, 5})
	require.NoError(t, err)
	assert.Equal(t, 4, sub.Len())
	b := &Batch{n: sub.Len(), fields: sub.fields, index: []int{4, 0, 4, 5}}
	assert.Equal(t, []int{4, 0, 4, 5}, batchIDs(t, b))
	sub.Tensor("x").SetAt(0, 99)
	assert.Equal(t, 4.0, ds.Tensor("x").At(8), "Subset copies")

	none, err := ds.Subset(nil)
	require.NoError(t, err)
	assert.Equal(t, 0, none.Len())

	for _, idx := range [][]int{{6}, {0, -1}} {
		_, err := ds.Subset(idx)
		assert.ErrorContains(t, err, "outside [0, 6)", "idx %v", idx)
	}
}

func TestSplit(t *testing.T) {
	ds := toyDataset(t, 20)
	train, val, err := ds.Split(0.25, 7)
	require.NoError(t, err)
	require.Equal(t, 15, train.Len())
	require.Equal(t, 5, val.Len())
	trainIDs, _ := train.Tensor("y").Ints()
	valIDs, _ := val.Tensor("y").Ints()
	seen := map[int]bool{}
	for _, id := range append(append([]int{}, trainIDs...), valIDs...) {
		assert.False(t, seen[id], "example %d in both parts", id)
		seen[id] = true
	}
	assert.Len(t, seen, 20)
	assert.IsIncreasing(t, valIDs, "each part keeps the dataset's order")

	_, again, err := ds.Split(0.25, 7)
	require.NoError(t, err)
	againIDs, _ := again.Tensor("y").Ints()
	assert.Equal(t, valIDs, againIDs, "same seed, same split")
	_, other, err := ds.Split(0.25, 8)
	require.NoError(t, err)
	otherIDs, _ := other.Tensor("y").Ints()
	assert.NotEqual(t, valIDs, otherIDs, "another seed, another split")

	for _, f := range []float64{-0.1, 1.5} {
		_, _, err := ds.Split(f, 1)
		assert.ErrorContains(t, err, "outside [0, 1]")
	}
}

func TestGatherRowsEveryDType(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64} {
		src, err := tensor.MustFromSlice([]float64{0, 1, 2, 3, 4, 5}, 3, 2).Cast(dt)
		require.NoError(t, err)
		got := gatherRows(src, []int{2, 0}, []int{1, 2})
		assert.Equal(t, dt, got.DType())
		assert.Equal(t, tensor.Shape{3, 2}, got.Shape())
		for i, w := range []float64{4, 5, 0, 1, 2, 3} {
			assert.Equal(t, w, got.At(i), "%v element %d", dt, i)
		}
	}
}
