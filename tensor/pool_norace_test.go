//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean nothing under -race; this file is built without it.

package tensor

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Once a tensor of a size class has been flushed, making one of that class
// and flushing it again allocates nothing: storage, Tensor and shape are
// all reused.
func TestPooledNewAllocatesNothing(t *testing.T) {
	for _, n := range []int{1, 3, 17, 127, 513} {
		var r Recycler
		r.Add(Zeros(Float32, n, 2))
		r.Flush()
		allocs := testing.AllocsPerRun(100, func() {
			r.Add(Zeros(Float32, n, 2))
			r.Flush()
		})
		require.Zero(t, allocs, "n=%d", n)
	}
}

// Empty takes pooled storage as it is: the stale values of the tensor
// flushed before it (what lets kernels that overwrite their output skip
// the clear), with the asked shape and dtype; and it panics on a negative
// dim as Zeros does.
func TestEmptyKeepsPooledValues(t *testing.T) {
	for _, dt := range []DType{Float32, Float64, Int32, Int64} {
		for _, n := range []int{1, 3, 17, 127, 513} {
			var r Recycler
			old := Zeros(dt, n)
			old.Fill(7)
			r.Add(old)
			require.Equal(t, 1, r.Flush())
			x := Empty(dt, 1, n)
			require.Equal(t, Shape{1, n}, x.Shape())
			require.Equal(t, dt, x.DType())
			for i := range n {
				require.EqualValues(t, 7, x.At(i), "%v n=%d i=%d", dt, n, i)
			}
		}
	}
	require.Panics(t, func() { Empty(Float32, 2, -1) })
}

// Steps whose tensor sizes drift (a batch of reviews has more words than
// the last) reuse the storage of the steps before them: later steps
// allocate less than a tenth of what they use (a step that grows past
// every free buffer still allocates), where a pool that matched exact
// size classes only allocates a large part of every step afresh and leaves
// the last steps' buffers to the collector. The pool itself holds at most
// the idle setting's two steps of storage.
func TestPoolReusesStorageWhenSizesDrift(t *testing.T) {
	TrimPool()
	defer TrimPool()
	rng := rand.New(rand.NewPCG(7, 17))
	const base = 1 << 16 // elements: 256 KiB of float32
	step := func() int64 {
		var r Recycler
		var bytes int64
		for k := range 6 { // an op output per layer, each its own width
			n := (k + 1) * base * (100 + rng.IntN(40)) / 100 // up to 40% above the smallest
			r.Add(Zeros(Float32, n))
			bytes += int64(4 * n)
		}
		r.Flush()
		return bytes
	}
	for range 10 {
		step()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var asked int64
	for range 50 {
		asked += step()
	}
	runtime.ReadMemStats(&after)
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	assert.Less(t, allocated, asked/10, "allocated %d bytes for %d bytes of tensors", allocated, asked)
	largestStep := int64(4 * 21 * base * 140 / 100 * 5 / 4) // the widest sizes, rounded up to their classes
	assert.LessOrEqual(t, PoolBytes(), DefaultIdleFlushes*largestStep)
}
