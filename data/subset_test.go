package data

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// sortedByClass is a dataset of sizes[c] examples of each class c, sorted
// by class as CIFAR's JPEG tree is, with an "id" field of the row index.
func sortedByClass(t *testing.T, sizes ...int) *Dataset {
	var labels, ids []int64
	for c, s := range sizes {
		for range s {
			ids = append(ids, int64(len(labels)))
			labels = append(labels, int64(c))
		}
	}
	ds, err := NewDataset(DenseField("id", tensor.MustFromSlice(ids, len(ids))), DenseField("label", tensor.MustFromSlice(labels, len(labels))))
	require.NoError(t, err)
	return ds
}

func classCounts(ds *Dataset) map[int64]int {
	m := map[int64]int{}
	for _, l := range ds.Tensor("label").Int64s() {
		m[l]++
	}
	return m
}

// checkSubset checks that sub holds distinct rows of the parent, in its
// order.
func checkSubset(t *testing.T, sub *Dataset, n int) {
	ids := sub.Tensor("id").Int64s()
	require.Len(t, ids, n)
	for i := 1; i < len(ids); i++ {
		require.Less(t, ids[i-1], ids[i], "rows in the dataset's order, no repeats")
	}
}

func TestRandomSubset(t *testing.T) {
	ds := sortedByClass(t, 100, 100, 100, 100, 100)
	a, err := ds.RandomSubset(50, 1)
	require.NoError(t, err)
	checkSubset(t, a, 50)
	b, err := ds.RandomSubset(50, 1)
	require.NoError(t, err)
	assert.Equal(t, a.Tensor("id").Int64s(), b.Tensor("id").Int64s(), "the same seed, the same subset")
	c, err := ds.RandomSubset(50, 2)
	require.NoError(t, err)
	assert.NotEqual(t, a.Tensor("id").Int64s(), c.Tensor("id").Int64s())
	assert.Greater(t, len(classCounts(a)), 1, "not the first rows of a sorted file")

	all, err := ds.RandomSubset(500, 1)
	require.NoError(t, err)
	assert.Same(t, ds, all)
	none, err := ds.RandomSubset(0, 1)
	require.NoError(t, err)
	assert.Equal(t, 0, none.Len())
	_, err = ds.RandomSubset(-1, 1)
	assert.ErrorContains(t, err, "want n >= 0")
	_, err = (*Dataset)(nil).RandomSubset(1, 1)
	assert.Error(t, err)
}

func TestStratifiedSubset(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		n     int
		want  map[int64][]int // each class's count: one of these
	}{
		{"cifar-like, 512 of 10 sorted classes", []int{500, 500, 500, 500, 500, 500, 500, 500, 500, 500}, 512,
			map[int64][]int{0: {51, 52}, 1: {51, 52}, 2: {51, 52}, 3: {51, 52}, 4: {51, 52}, 5: {51, 52}, 6: {51, 52}, 7: {51, 52}, 8: {51, 52}, 9: {51, 52}}},
		{"proportional", []int{70, 20, 10}, 10, map[int64][]int{0: {7}, 1: {2}, 2: {1}}},
		{"largest remainders", []int{5, 3, 2}, 5, map[int64][]int{0: {2, 3}, 1: {1, 2}, 2: {1}}},
		{"a class too small for a share", []int{98, 1, 1}, 10, map[int64][]int{0: {10, 9}, 1: {0, 1}, 2: {0, 1}}},
		{"odd sizes", []int{13, 7, 29, 1}, 17, map[int64][]int{0: {4, 5}, 1: {2, 3}, 2: {9, 10}, 3: {0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := sortedByClass(t, tc.sizes...)
			for seed := range uint64(5) {
				sub, err := ds.StratifiedSubset(tc.n, "label", seed)
				require.NoError(t, err)
				checkSubset(t, sub, tc.n)
				counts := classCounts(sub)
				for c, allowed := range tc.want {
					assert.Contains(t, allowed, counts[c], "class %d, seed %d: %v", c, seed, counts)
				}
			}
			a, _ := ds.StratifiedSubset(tc.n, "label", 3)
			b, _ := ds.StratifiedSubset(tc.n, "label", 3)
			assert.Equal(t, a.Tensor("id").Int64s(), b.Tensor("id").Int64s())
		})
	}
	ds := sortedByClass(t, 500, 500)
	take := classCounts(ds.Take(300))
	assert.Equal(t, map[int64]int{0: 300}, take, "Take of a sorted file is one class: why --limit must not use it")
}

func TestStratifiedSubsetErrors(t *testing.T) {
	ds := sortedByClass(t, 3, 3)
	f, err := NewDataset(DenseField("label", tensor.MustFromSlice([]float32{0, 1}, 2)))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		ds   *Dataset
		n    int
		by   string
		want string
	}{
		{"no field", ds, 2, "class", `no field "class"`},
		{"not int64", f, 1, "label", "not a dense int64"},
		{"negative", ds, -1, "label", "want n >= 0"},
		{"nil", nil, 1, "label", "nil Dataset"},
	} {
		_, err := tc.ds.StratifiedSubset(tc.n, tc.by, 1)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
}

func TestLimit(t *testing.T) {
	ds := sortedByClass(t, 500, 500, 500, 500)
	sub, note, err := Limit(ds, 100, "label", 1)
	require.NoError(t, err)
	assert.Equal(t, map[int64]int{0: 25, 1: 25, 2: 25, 3: 25}, classCounts(sub))
	assert.Equal(t, "a random subset of 100 of 2000 examples (seed 1), stratified by label: 4 classes of 25 to 25", note)

	sub, note, err = Limit(ds, 100, "", 1) // no labels: a plain random subset
	require.NoError(t, err)
	checkSubset(t, sub, 100)
	assert.Equal(t, "a random subset of 100 of 2000 examples (seed 1)", note)
	sub, note, err = Limit(ds, 100, "tags", 1) // a label field it does not have: random
	require.NoError(t, err)
	assert.Equal(t, 100, sub.Len())
	assert.NotContains(t, note, "stratified")

	for _, n := range []int{0, 2000, 5000} {
		sub, note, err = Limit(ds, n, "label", 1)
		require.NoError(t, err)
		assert.Same(t, ds, sub)
		assert.Empty(t, note)
	}
	_, _, err = Limit(nil, 1, "label", 1)
	assert.Error(t, err)
}
