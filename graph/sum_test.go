package graph

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// sumInto adds element by element, into a fresh slice or in place, in
// chunks over the cores when large, on odd sizes either side of the
// threshold.
func TestSumInto(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := tensor.NewRNG(8)
	for _, n := range []int{1, 7, 65_535, 100_003} {
		a, b := randF32(t, rng, n).Float32s(), randF32(t, rng, n).Float32s()
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		dst := make([]float32, n)
		sumInto(dst, a, b)
		require.Equal(t, want, dst, "n %d", n)
		sumInto(a, a, b)
		require.Equal(t, want, a, "n %d in place", n)
	}
}
