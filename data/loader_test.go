package data

import (
	"iter"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// source is the trainer's interface (package train's Source[*Batch]),
// which Loader and Stream both satisfy.
type source interface {
	Len() int
	Batches(epoch int) iter.Seq2[*Batch, error]
}

var _, _ source = (*Loader)(nil), (*Stream)(nil)

// epochIDs runs one epoch of src and returns the batch sizes and the example ids in order.
func epochIDs(t testing.TB, src source, epoch int) (sizes, ids []int) {
	t.Helper()
	for b, err := range src.Batches(epoch) {
		require.NoError(t, err)
		sizes = append(sizes, b.Len())
		ids = append(ids, batchIDs(t, b)...)
	}
	return sizes, ids
}

func TestLoaderInOrder(t *testing.T) {
	ds := toyDataset(t, 10)
	tests := []struct {
		size     int
		dropLast bool
		sizes    []int
	}{
		{size: 3, sizes: []int{3, 3, 3, 1}}, // last partial batch kept
		{size: 3, dropLast: true, sizes: []int{3, 3, 3}},
		{size: 5, sizes: []int{5, 5}},
		{size: 64, sizes: []int{10}},
		{size: 64, dropLast: true, sizes: nil},
		{size: 1, sizes: []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	}
	for _, tc := range tests {
		var opts []Option
		if tc.dropLast {
			opts = append(opts, DropLast())
		}
		l, err := NewLoader(ds, tc.size, opts...)
		require.NoError(t, err)
		sizes, ids := epochIDs(t, l, 0)
		assert.Equal(t, tc.sizes, sizes, "size %d", tc.size)
		total := 0
		for _, s := range tc.sizes {
			total += s
		}
		assert.Equal(t, total, l.Len(), "Len counts the examples an epoch yields")
		assert.Equal(t, len(tc.sizes), l.NumBatches())
		for i, id := range ids {
			assert.Equal(t, i, id)
		}
	}
}

func TestLoaderShuffleCoversEveryExampleOncePerEpoch(t *testing.T) {
	const n = 103
	ds := toyDataset(t, n)
	l, err := NewLoader(ds, 16, Shuffle(42))
	require.NoError(t, err)
	var epochs [][]int
	for e := range 3 {
		sizes, ids := epochIDs(t, l, e)
		assert.Equal(t, []int{16, 16, 16, 16, 16, 16, 7}, sizes)
		sorted := slices.Sorted(slices.Values(ids))
		for i, id := range sorted {
			require.Equal(t, i, id, "every example exactly once per epoch")
		}
		assert.NotEqual(t, sorted, ids, "the order is shuffled")
		epochs = append(epochs, ids)
	}
	assert.NotEqual(t, epochs[0], epochs[1], "each epoch draws a new order")

	// The same seed and epoch replay the same batches, in any order of
	// calls and from a new loader; another seed does not.
	again, err := NewLoader(ds, 16, Shuffle(42))
	require.NoError(t, err)
	other, err := NewLoader(ds, 16, Shuffle(43))
	require.NoError(t, err)
	for _, e := range []int{2, 0, 1} {
		_, ids := epochIDs(t, again, e)
		_, otherIDs := epochIDs(t, other, e)
		assert.Equal(t, epochs[e], ids, "epoch %d", e)
		assert.NotEqual(t, epochs[e], otherIDs, "epoch %d", e)
	}

	for b, err := range l.Batches(0) {
		require.NoError(t, err)
		b.Tensor("x").SetAt(0, -100)
		b.Ragged("seq").Values.SetAt(0, -1)
	}
	for i := range n {
		assert.Equal(t, float64(i), ds.Tensor("x").At(2*i), "batches are copies")
	}
}

// padding is the number of padded steps a batch of sequences would carry.
func padding(r *tensor.Ragged) int {
	p := 0
	for _, l := range r.Lengths() {
		p += r.MaxLen() - l
	}
	return p
}

func TestLoaderBucketBy(t *testing.T) {
	const n = 400
	ds := toyDataset(t, n)
	plain, err := NewLoader(ds, 8, Shuffle(5))
	require.NoError(t, err)
	bucketed, err := NewLoader(ds, 8, Shuffle(5), BucketBy("seq", 10))
	require.NoError(t, err)
	waste := func(l *Loader, e int) (pad int, ids []int) {
		for b, err := range l.Batches(e) {
			require.NoError(t, err)
			pad += padding(b.Ragged("seq"))
			ids = append(ids, batchIDs(t, b)...)
		}
		return pad, ids
	}
	plainPad, _ := waste(plain, 0)
	bucketPad, ids := waste(bucketed, 0)
	// Lengths 1..4 in equal shares: a window of 80 holds about 20 of each,
	// so at most one batch per length boundary mixes lengths.
	assert.Less(t, bucketPad*5, plainPad, "bucketing wastes far less padding (%d vs %d steps)", bucketPad, plainPad)
	assert.ElementsMatch(t, ds.Tensor("y").Int64s(), toInt64(ids), "every example once")
	_, ids1 := waste(bucketed, 1)
	assert.NotEqual(t, ids, ids1, "each epoch draws new buckets")
	_, again := waste(bucketed, 0)
	assert.Equal(t, ids, again, "same seed and epoch, same batches")

	// Without Shuffle the windows are sorted but kept in order.
	ordered, err := NewLoader(ds.Take(8), 2, BucketBy("seq", 2))
	require.NoError(t, err)
	_, ids = epochIDs(t, ordered, 0)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, ids)
	ordered, err = NewLoader(ds.Take(8), 2, BucketBy("seq", 4))
	require.NoError(t, err)
	_, ids = epochIDs(t, ordered, 0)
	assert.Equal(t, []int{0, 4, 1, 5, 2, 6, 3, 7}, ids, "lengths 1,2,3,4,1,2,3,4 sorted stably")
}

func toInt64(ids []int) []int64 {
	out := make([]int64, len(ids))
	for i, v := range ids {
		out[i] = int64(v)
	}
	return out
}

func TestLoaderOptionErrors(t *testing.T) {
	ds := toyDataset(t, 4)
	tests := []struct {
		name    string
		ds      *Dataset
		size    int
		opts    []Option
		wantErr string
	}{
		{name: "nil dataset", size: 2, wantErr: "nil dataset"},
		{name: "batch 0", ds: ds, size: 0, wantErr: "batch size 0"},
		{name: "bucket dense", ds: ds, size: 2, opts: []Option{BucketBy("x", 2)}, wantErr: `BucketBy("x"): no ragged field`},
		{name: "bucket window", ds: ds, size: 2, opts: []Option{BucketBy("seq", 0)}, wantErr: "window needs at least 1"},
		{name: "stream option", ds: ds, size: 2, opts: []Option{ShuffleBuffer(3)}, wantErr: "Stream options"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLoader(tc.ds, tc.size, tc.opts...)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestLoaderEarlyBreakAndEmpty(t *testing.T) {
	l, err := NewLoader(toyDataset(t, 10), 2, Shuffle(3))
	require.NoError(t, err)
	count := 0
	for range l.Batches(0) {
		count++
		if count == 2 {
			break
		}
	}
	assert.Equal(t, 2, count)

	empty, err := NewLoader(toyDataset(t, 0), 4, Shuffle(3))
	require.NoError(t, err)
	for range empty.Batches(0) {
		t.Fatal("an empty dataset has no batches")
	}
	assert.Equal(t, 0, empty.Len())
}

func TestBatchPadded(t *testing.T) {
	ds, err := NewDataset(SeqField("w", [][]int64{{1, 2, 3}, {4}, {}}), DenseField("y", tensor.MustFromSlice([]int64{7, 8, 9}, 3)))
	require.NoError(t, err)
	l, err := NewLoader(ds, 3)
	require.NoError(t, err)
	for b, err := range l.Batches(0) {
		require.NoError(t, err)
		padded, mask, err := b.Padded("w", -1)
		require.NoError(t, err)
		assert.Equal(t, tensor.Shape{3, 3}, padded.Shape())
		assert.Equal(t, []int64{1, 2, 3, 4, -1, -1, -1, -1, -1}, padded.Int64s())
		assert.Equal(t, []float32{1, 1, 1, 1, 0, 0, 0, 0, 0}, mask.Float32s())
		_, _, err = b.Padded("y", 0)
		assert.ErrorContains(t, err, `no ragged field "y"`)
		assert.Equal(t, []string{"w", "y"}, b.Names())
		assert.Nil(t, b.Tensor("w"))
		assert.Nil(t, b.Ragged("y"))
	}
}

// Epoch 0 of Shuffle(seed) follows tensor.NewRNG(seed).Perm, the order the
// earlier Dataset.Batches drew, so MNIST runs keep their figures.
func TestLoaderFirstEpochMatchesNewRNG(t *testing.T) {
	l, err := NewLoader(toyDataset(t, 50), 50, Shuffle(1))
	require.NoError(t, err)
	assert.Equal(t, [][]int{tensor.NewRNG(1).Perm(50)}, l.Order(0))
}

func TestLoaderShard(t *testing.T) {
	ds := toyDataset(t, 23)
	tests := []struct {
		name        string
		size, ranks int
		opts        []Option
		steps       int // batches per shard
	}{
		{"one rank is the whole loader", 4, 1, []Option{Shuffle(3)}, 6},
		{"2 ranks, 6 batches (short last one kept)", 4, 2, []Option{Shuffle(3)}, 3},
		{"3 ranks, 6 batches", 4, 3, []Option{Shuffle(5)}, 2},
		{"4 ranks, 6 batches: 2 left out", 4, 4, []Option{Shuffle(5)}, 1},
		{"2 ranks, drop last", 5, 2, []Option{Shuffle(7), DropLast()}, 2},
		{"2 ranks, in order", 3, 2, nil, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := NewLoader(ds, tc.size, tc.opts...)
			require.NoError(t, err)
			for epoch := range 2 {
				want := whole.Order(epoch)[:tc.steps*tc.ranks]
				seen := map[int]bool{}
				for rank := range tc.ranks {
					sh, err := whole.Shard(rank, tc.ranks)
					require.NoError(t, err)
					r, n := sh.ShardOf()
					assert.Equal(t, []int{rank, tc.ranks}, []int{r, n})
					require.Equal(t, tc.steps, sh.NumBatches())
					sizes, ids := epochIDs(t, sh, epoch)
					require.Len(t, sizes, tc.steps)
					assert.Equal(t, sh.Len(), len(ids), "Len counts the shard's examples")
					off := 0
					for k, n := range sizes {
						assert.Equal(t, want[k*tc.ranks+rank], ids[off:off+n], "step %d of rank %d", k, rank)
						for _, id := range ids[off : off+n] {
							assert.False(t, seen[id], "row %d seen twice", id)
							seen[id] = true
						}
						off += n
					}
				}
			}
		})
	}
}

func TestLoaderShardErrors(t *testing.T) {
	l, err := NewLoader(toyDataset(t, 8), 2)
	require.NoError(t, err)
	for _, tc := range []struct{ rank, ranks int }{{0, 0}, {-1, 2}, {2, 2}} {
		_, err := l.Shard(tc.rank, tc.ranks)
		assert.ErrorContains(t, err, "want 0 <= rank < ranks")
	}
	sh, err := l.Shard(0, 2)
	require.NoError(t, err)
	_, err = sh.Shard(0, 2)
	assert.ErrorContains(t, err, "already shard 0 of 2")
}

// skewedDataset holds n sequences of lengths from 1 to 97, spread
// unevenly, as review lengths are.
func skewedDataset(t testing.TB, n int) *Dataset {
	t.Helper()
	seqs := make([][]int64, n)
	for i := range n {
		seqs[i] = make([]int64, 1+(i*i*7)%97)
	}
	ds, err := NewDataset(SeqField("seq", seqs))
	require.NoError(t, err)
	return ds
}

// A balanced shard deals each step's rows so that the ranks' total lengths
// differ by at most the step's longest row, every row is seen once, and
// (without bucketing) a step holds the rows of the unsharded loader's
// batches for that step.
func TestLoaderShardBalance(t *testing.T) {
	ds := skewedDataset(t, 61)
	seq := ds.Ragged("seq")
	length := func(i int) int { return seq.Offsets[i+1] - seq.Offsets[i] }
	tests := []struct {
		name        string
		size, ranks int
		opts        []Option
		bucketed    bool
	}{
		{"2 ranks, shuffled", 8, 2, []Option{Shuffle(3), BalanceBy("seq")}, false},
		{"3 ranks, short last batch", 5, 3, []Option{Shuffle(4), BalanceBy("seq")}, false},
		{"2 ranks, in order", 6, 2, []Option{BalanceBy("seq")}, false},
		{"2 ranks, bucketed", 4, 2, []Option{Shuffle(5), BucketBy("seq", 3)}, true},
		{"3 ranks, bucketed, drop last", 4, 3, []Option{Shuffle(6), BucketBy("seq", 2), DropLast()}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole, err := NewLoader(ds, tc.size, tc.opts...)
			require.NoError(t, err)
			for epoch := range 2 {
				steps := len(whole.Order(epoch)) / tc.ranks
				shares := make([][][]int, tc.ranks) // rank, step, rows
				for rank := range tc.ranks {
					sh, err := whole.Shard(rank, tc.ranks)
					require.NoError(t, err)
					n := 0
					for b, err := range sh.Batches(epoch) {
						require.NoError(t, err)
						shares[rank] = append(shares[rank], b.Index())
						n += b.Len()
					}
					require.Len(t, shares[rank], steps)
					assert.Equal(t, sh.Len(), n, "Len counts the shard's examples")
				}
				seen := map[int]bool{}
				for k := range steps {
					var step []int
					sums, sizes := make([]int, tc.ranks), map[int]bool{}
					longest := 0
					for rank := range tc.ranks {
						for _, id := range shares[rank][k] {
							require.False(t, seen[id], "row %d seen twice", id)
							seen[id] = true
							sums[rank] += length(id)
							longest = max(longest, length(id))
						}
						step = append(step, shares[rank][k]...)
						sizes[len(shares[rank][k])] = true
					}
					if !tc.bucketed {
						want := slices.Concat(whole.Order(epoch)[k*tc.ranks : (k+1)*tc.ranks]...)
						assert.ElementsMatch(t, want, step, "step %d holds the unsharded batches' rows", k)
					}
					if len(sizes) == 1 { // equal batches: their lengths are balanced
						assert.LessOrEqual(t, slices.Max(sums)-slices.Min(sums), longest, "step %d: total lengths %v", k, sums)
					}
				}
			}
		})
	}
}
