package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recycleNew makes a float32 tensor of n elements and gives it back
// through a Recycler, returning it.
func recycleNew(n int) *Tensor {
	var r Recycler
	x := Zeros(Float32, n)
	r.Add(x)
	r.Flush()
	return x
}

// The pool never holds more than its limit, whatever sizes come back: the
// buffers given back longest ago go first, the newest stay for reuse.
func TestPoolStaysUnderItsLimit(t *testing.T) {
	const limit = 1 << 20
	prev := SetPoolLimit(limit)
	defer SetPoolLimit(prev)
	TrimPool()
	require.Zero(t, PoolBytes())

	var last *Tensor
	for i := range 300 { // 300 sizes from 1 KiB to about 300 KiB of storage
		n := 256 * (i + 1)
		last = recycleNew(n)
		require.LessOrEqual(t, PoolBytes(), int64(limit), "after %d elements", n)
	}
	assert.Greater(t, PoolBytes(), int64(limit/2), "the pool should stay filled near its limit")
	// The newest buffer is still there: a tensor of its class reuses it.
	assert.Same(t, last, Zeros(Float32, 256*300))

	tests := []struct {
		name string
		n    int   // elements of the buffer given back
		want int64 // PoolBytes afterwards
	}{
		{"larger than the limit: not kept", limit/4 + 1, -1},
		{"exactly the limit: evicts everything else", limit / 4, limit},
	}
	for _, tc := range tests {
		before := PoolBytes()
		recycleNew(tc.n)
		want := tc.want
		if want < 0 {
			want = before
		}
		assert.Equal(t, want, PoolBytes(), tc.name)
	}

	TrimPool()
	assert.Zero(t, PoolBytes())
	SetPoolLimit(0) // pooling off
	recycleNew(100)
	assert.Zero(t, PoolBytes())
	SetPoolLimit(limit)
	recycleNew(100)
	recycleNew(200)
	assert.Equal(t, int64(4*(112+224)), PoolBytes()) // capacities: the classes of 100 and 200 elements
	SetPoolLimit(4 * 224)                            // lowering the limit evicts the older one
	assert.Equal(t, int64(4*224), PoolBytes())
}
