package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flushNew makes float32 tensors of the sizes ns and gives them back in
// that order within one step (a Reclaim after each, then one Flush),
// returning them. One Flush of them all would give them back in the order
// of their addresses, which the allocator chooses, and the pool's
// evictions go by the order buffers came back.
func flushNew(ns ...int) []*Tensor {
	ts := make([]*Tensor, len(ns))
	for i, n := range ns {
		ts[i] = Zeros(Float32, n)
	}
	var r Recycler
	for _, t := range ts {
		r.Add(t)
		r.Reclaim()
	}
	r.Flush()
	return ts
}

// The pool never holds more than its limit, whatever sizes come back: the
// buffers given back longest ago go first, the newest stay for reuse.
func TestPoolStaysUnderItsLimit(t *testing.T) {
	const limit = 1 << 20
	prev := SetPoolLimit(limit)
	defer SetPoolLimit(prev)
	TrimPool()
	require.Zero(t, PoolBytes())

	sizes := make([]int, 300) // 300 sizes from 1 KiB to about 300 KiB of storage, 45 MiB in all
	for i := range sizes {
		sizes[i] = 256 * (i + 1)
	}
	ts := flushNew(sizes...)
	require.LessOrEqual(t, PoolBytes(), int64(limit))
	assert.Greater(t, PoolBytes(), int64(limit/2), "the pool should stay filled near its limit")
	// The newest buffer is still there: a tensor of its class reuses it.
	assert.Same(t, ts[len(ts)-1], Zeros(Float32, sizes[len(sizes)-1]))

	tests := []struct {
		name string
		n    int   // elements of the buffer given back
		want int64 // PoolBytes afterwards; -1: unchanged
	}{
		{"larger than the limit: not kept", limit/4 + 1, -1},
		{"exactly the limit: evicts everything else", limit / 4, limit},
	}
	for _, tc := range tests {
		before := PoolBytes()
		flushNew(tc.n)
		want := tc.want
		if want < 0 {
			want = before
		}
		assert.Equal(t, want, PoolBytes(), tc.name)
	}

	TrimPool()
	assert.Zero(t, PoolBytes())
	SetPoolLimit(0) // pooling off
	flushNew(100)
	assert.Zero(t, PoolBytes())
	SetPoolLimit(limit)
	flushNew(100, 200)
	assert.Equal(t, int64(4*(112+224)), PoolBytes()) // capacities: the classes of 100 and 200 elements
	SetPoolLimit(4 * 224)                            // lowering the limit evicts the older one
	assert.Equal(t, int64(4*224), PoolBytes())
}

// A buffer that no allocation takes within the idle setting's flushes is
// dropped; one taken back at every step stays, however many steps pass.
// With idle dropping off, both stay.
func TestPoolDropsIdleBuffers(t *testing.T) {
	TrimPool()
	flushNew(1000) // a size used once, as by a batch of one sequence length
	steady := flushNew(5000)[0]
	require.Equal(t, int64(4*(1024+5120)), PoolBytes())
	for step := range 10 { // every step takes the steady buffer again
		x := Zeros(Float32, 5000)
		require.Same(t, steady, x, "step %d", step)
		var r Recycler
		r.Add(x)
		r.Flush()
		if step >= DefaultIdleFlushes-1 {
			assert.Equal(t, int64(4*5120), PoolBytes(), "step %d: the idle buffer should be gone", step)
		}
	}
	TrimPool()
	prev := SetPoolIdleFlushes(0)
	defer SetPoolIdleFlushes(prev)
	require.Equal(t, DefaultIdleFlushes, prev)
	flushNew(1000)
	for range 5 {
		flushNew()
	}
	assert.Equal(t, int64(4*1024), PoolBytes())
	TrimPool()
}
