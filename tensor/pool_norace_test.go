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
