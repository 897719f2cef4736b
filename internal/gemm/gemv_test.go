package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// Every row kernel this CPU has must agree with the portable rowGo on odd
// widths and depths, with A read at a stride and B rows padded, including
// the depths where the wide kernels prefetch.
func TestRowKernelsMatchGo(t *testing.T) {
	eachPath(t, func(t *testing.T, p path) {
		if configs32[p].row == nil {
			t.Skipf("the %s path has no row kernel", pathNames[p])
		}
		rng := rand.New(rand.NewPCG(13, 14))
		for _, n := range []int{1, 3, 17, 64, 127, 513} {
			for _, k := range []int{1, 3, 17, 127, 513} {
				for _, csA := range []int{1, 3} {
					checkRow(t, rng, configs32[p].row, n, k, csA, f32, 1e-5)
					checkRow(t, rng, configs64[p].row, n, k, csA, func(s []float64) []float64 { return s }, 1e-13)
				}
			}
		}
	})
}

func checkRow[T tensor.Float](t *testing.T, rng *rand.Rand, row rowKernel[T], n, k, csA int, conv func([]float64) []T, rtol float64) {
	rsB := n + 3
	a, b := conv(randSlice(rng, k*csA)), conv(randSlice(rng, k*rsB))
	want, got := make([]T, n), make([]T, n)
	rowGo(k, a, csA, b, rsB, want)
	row(k, a, csA, b, rsB, got)
	for j := range want {
		tol := rtol * float64(k) * (1 + math.Abs(float64(want[j])))
		require.InDeltaf(t, float64(want[j]), float64(got[j]), tol, "n=%d k=%d csA=%d column %d", n, k, csA, j)
	}
}
