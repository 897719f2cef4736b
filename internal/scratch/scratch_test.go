package scratch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGetPut checks that Get returns n elements of the asked type, from a
// returned buffer when it is large enough, and that the element types keep
// pools of their own.
func TestGetPut(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1 << 12} {
		f := Get[float32](n)
		require.Len(t, *f, n)
		Put(f)
		d := Get[float64](n)
		require.Len(t, *d, n)
		Put(d)
		a := Get[int](n + 1)
		require.Len(t, *a, n+1)
		Put(a)
	}
	big := Get[float32](100)
	Put(big)
	small := Get[float32](10) // a pooled buffer, or a fresh one after a GC
	require.Len(t, *small, 10)
	require.GreaterOrEqual(t, cap(*small), 10)
	Put(small)
}
