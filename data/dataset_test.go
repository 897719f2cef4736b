package data

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// toyDataset has n examples: image i is [2] = {i, -i} (float32) and label i is i (int64),
// so every batch row can be traced back to its example.
func toyDataset(t *testing.T, n int) *Dataset {
	t.Helper()
	img := make([]float32, 2*n)
	lab := make([]int64, n)
	for i := range n {
		img[2*i], img[2*i+1] = float32(i), float32(-i)
		lab[i] = int64(i)
	}
	ds, err := NewDataset(tensor.MustFromSlice(img, n, 2), tensor.MustFromSlice(lab))
	require.NoError(t, err)
	return ds
}

// batchIDs checks that each batch row's image matches its label and returns the labels.
func batchIDs(t *testing.T, b Batch) []int {
	t.Helper()
	ids, err := b.Labels.Ints()
	require.NoError(t, err)
	require.Equal(t, len(ids), b.Images.Dim(0))
	img := b.Images.Float32s()
	for r, id := range ids {
		assert.Equal(t, []float32{float32(id), float32(-id)}, img[2*r:2*r+2], "row %d", r)
	}
	return ids
}

func TestNewDataset(t *testing.T) {
	tests := []struct {
		name           string
		images, labels *tensor.Tensor
		wantErr        string
	}{
		{name: "ok", images: tensor.Zeros(tensor.Float32, 3, 1, 2, 2), labels: tensor.Zeros(tensor.Int64, 3)},
		{name: "empty", images: tensor.Zeros(tensor.Float32, 0, 4), labels: tensor.Zeros(tensor.Int64, 0)},
		{name: "count mismatch", images: tensor.Zeros(tensor.Float32, 3, 4), labels: tensor.Zeros(tensor.Int64, 2),
			wantErr: "3 images (shape [3 4]) but 2 labels"},
		{name: "scalar labels", images: tensor.Zeros(tensor.Float32, 1, 4), labels: tensor.Scalar(int64(1)), wantErr: "example axis"},
		{name: "nil labels", images: tensor.Zeros(tensor.Float32, 1, 4), wantErr: "needs both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := NewDataset(tc.images, tc.labels)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.images.Dim(0), ds.Len())
			assert.Same(t, tc.images, ds.Images())
			assert.Same(t, tc.labels, ds.Labels())
		})
	}
}

func TestBatchesInOrder(t *testing.T) {
	ds := toyDataset(t, 10)
	tests := []struct {
		size  int
		sizes []int
	}{
		{size: 3, sizes: []int{3, 3, 3, 1}}, // last partial batch kept
		{size: 5, sizes: []int{5, 5}},
		{size: 10, sizes: []int{10}},
		{size: 64, sizes: []int{10}},
		{size: 1, sizes: []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{size: 0, sizes: nil},
		{size: -2, sizes: nil},
	}
	for _, tc := range tests {
		var sizes, ids []int
		for b := range ds.Batches(tc.size, nil) {
			sizes = append(sizes, b.Images.Dim(0))
			ids = append(ids, batchIDs(t, b)...)
		}
		assert.Equal(t, tc.sizes, sizes, "size %d", tc.size)
		if tc.sizes != nil {
			assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ids, "size %d", tc.size)
		}
	}
	for b := range ds.Batches(4, nil) {
		b.Images.SetAt(0, 100)
		break
	}
	assert.Equal(t, 100.0, ds.Images().At(0), "unshuffled batches are views")
}

func TestBatchesShuffledCoverEveryExampleOncePerEpoch(t *testing.T) {
	const n = 103
	ds := toyDataset(t, n)
	rng := tensor.NewRNG(42)
	seq := ds.Batches(16, rng)
	var epochs [][]int
	for range 3 {
		var ids, sizes []int
		for b := range seq {
			sizes = append(sizes, b.Images.Dim(0))
			ids = append(ids, batchIDs(t, b)...)
		}
		assert.Equal(t, []int{16, 16, 16, 16, 16, 16, 7}, sizes)
		sorted := slices.Sorted(slices.Values(ids))
		for i, id := range sorted {
			require.Equal(t, i, id, "every example exactly once per epoch")
		}
		assert.NotEqual(t, sorted, ids, "the order is shuffled")
		epochs = append(epochs, ids)
	}
	assert.NotEqual(t, epochs[0], epochs[1], "each epoch draws a new order")

	// The same seed replays the same epochs; another seed does not.
	again := ds.Batches(16, tensor.NewRNG(42))
	other := ds.Batches(16, tensor.NewRNG(43))
	for e := range 3 {
		var ids, otherIDs []int
		for b := range again {
			ids = append(ids, batchIDs(t, b)...)
		}
		for b := range other {
			otherIDs = append(otherIDs, batchIDs(t, b)...)
		}
		assert.Equal(t, epochs[e], ids, "epoch %d", e)
		assert.NotEqual(t, epochs[e], otherIDs, "epoch %d", e)
	}

	for b := range ds.Batches(8, tensor.NewRNG(1)) {
		b.Images.SetAt(0, -100)
		b.Labels.SetAt(0, -1)
	}
	for i := range n {
		assert.Equal(t, float64(i), ds.Images().At(2*i), "shuffled batches are copies")
	}
}

func TestBatchesEarlyBreakAndEmpty(t *testing.T) {
	ds := toyDataset(t, 10)
	count := 0
	for range ds.Batches(2, tensor.NewRNG(3)) {
		count++
		if count == 2 {
			break
		}
	}
	assert.Equal(t, 2, count)

	empty := toyDataset(t, 0)
	for range empty.Batches(4, tensor.NewRNG(3)) {
		t.Fatal("an empty dataset has no batches")
	}
}

func TestTake(t *testing.T) {
	ds := toyDataset(t, 5)
	for _, tc := range []struct{ n, want int }{{3, 3}, {5, 5}, {9, 5}, {0, 0}, {-1, 0}} {
		sub := ds.Take(tc.n)
		assert.Equal(t, tc.want, sub.Len(), "Take(%d)", tc.n)
		assert.Equal(t, tc.want, sub.Labels().Dim(0))
		var ids []int
		for b := range sub.Batches(2, nil) {
			ids = append(ids, batchIDs(t, b)...)
		}
		assert.Len(t, ids, tc.want)
	}
	ds.Take(2).Images().SetAt(0, 50)
	assert.Equal(t, 50.0, ds.Images().At(0), "Take returns views")
}

func TestSubset(t *testing.T) {
	ds := toyDataset(t, 6)
	sub, err := ds.Subset([]int{4, 0, 4, 5})
	require.NoError(t, err)
	assert.Equal(t, 4, sub.Len())
	var ids []int
	for b := range sub.Batches(10, nil) {
		ids = append(ids, batchIDs(t, b)...)
	}
	assert.Equal(t, []int{4, 0, 4, 5}, ids)
	sub.Images().SetAt(0, 99)
	assert.Equal(t, 4.0, ds.Images().At(8), "Subset copies")

	none, err := ds.Subset(nil)
	require.NoError(t, err)
	assert.Equal(t, 0, none.Len())

	for _, idx := range [][]int{{6}, {0, -1}} {
		_, err := ds.Subset(idx)
		assert.ErrorContains(t, err, "outside [0, 6)", "idx %v", idx)
	}
}

func TestGatherEveryDType(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64} {
		src, err := tensor.MustFromSlice([]float64{0, 1, 2, 3, 4, 5}, 3, 2).Cast(dt)
		require.NoError(t, err)
		got := gather(src, []int{2, 0})
		assert.Equal(t, dt, got.DType())
		assert.Equal(t, tensor.Shape{2, 2}, got.Shape())
		for i, w := range []float64{4, 5, 0, 1} {
			assert.Equal(t, w, got.At(i), "%v element %d", dt, i)
		}
	}
}
