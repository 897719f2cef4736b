package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// TestMaxPool2x2MatchesReference checks MaxPool2x2, with its AVX2 kernel
// (where this CPU has it) and with the Go loop forced, against a plain
// loop over the four cells of each window: the same bits for every
// maximum and the same index, on rows of every length around the
// kernel's groups of four and eight windows, with ties, −0 and +0, and
// NaN, and nothing written past the row.
func TestMaxPool2x2MatchesReference(t *testing.T) {
	for _, forceGo := range []bool{false, true} {
		t.Run(fmt.Sprintf("forceGo=%v", forceGo), func(t *testing.T) {
			if forceGo {
				old := setMax2x2AVX2(false)
				t.Cleanup(func() { setMax2x2AVX2(old) })
			}
			rng := rand.New(rand.NewPCG(3, 4))
			for n := range 34 {
				checkMaxPool2x2[float32](t, rng, n)
				checkMaxPool2x2[float64](t, rng, n)
			}
		})
	}
}

func checkMaxPool2x2[T tensor.Float](t *testing.T, rng *rand.Rand, n int) {
	const top, base = 3, 100
	w := 2*n + 5 // the bottom row starts w cells after the top one
	x := make([]T, top+w+2*n+1)
	for i := range x {
		switch r := rng.IntN(10); {
		case r == 0:
			x[i] = T(math.NaN())
		case r == 1:
			x[i] = T(math.Copysign(0, float64(i%2)-0.5))
		case r < 4:
			x[i] = x[i/2] // ties
		default:
			x[i] = T(rng.NormFloat64())
		}
	}
	wantY, wantA := make([]T, n), make([]int, n)
	for k := range n {
		at := top + 2*k
		for _, c := range []int{top + 2*k + 1, top + w + 2*k, top + w + 2*k + 1} {
			if x[c] > x[at] {
				at = c
			}
		}
		wantY[k], wantA[k] = x[at], base+at
	}
	y, a := make([]T, n+1), make([]int, n+1)
	y[n], a[n] = 42, 42
	MaxPool2x2(x, top, w, base, y[:n], a[:n])
	for k := range n {
		require.Equal(t, math.Float64bits(float64(wantY[k])), math.Float64bits(float64(y[k])), "n %d, window %d: want %v, got %v", n, k, wantY[k], y[k])
	}
	require.Equal(t, wantA, a[:n], "n %d", n)
	require.Equal(t, T(42), y[n], "n %d: nothing written past the row", n)
	require.Equal(t, 42, a[n], "n %d: nothing written past the row", n)
}
