//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean nothing under -race; this file is built without it.

package tensor

import (
	"testing"

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
