package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// lengths are odd sizes around the assembly's 8- and 32-value rounds.
var lengths = []int{0, 1, 3, 7, 8, 9, 17, 31, 32, 33, 127, 513}

// TestMatchGo checks Add and AddConst against plain loops on every length,
// at an offset that leaves the runs unaligned, with the assembly (where
// this CPU has it) and with the Go loops forced.
func TestMatchGo(t *testing.T) {
	for _, forceGo := range []bool{false, true} {
		t.Run(fmt.Sprintf("forceGo=%v", forceGo), func(t *testing.T) {
			if forceGo {
				old := hasAVX
				setAVX(false)
				t.Cleanup(func() { setAVX(old) })
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for _, n := range lengths {
				check[float32](t, rng, n)
				check[float64](t, rng, n)
			}
		})
	}
}

func check[T Float](t *testing.T, rng *rand.Rand, n int) {
	src, dst := make([]T, n+1), make([]T, n+3)
	for i := range src {
		src[i] = T(rng.NormFloat64())
	}
	for i := range dst {
		dst[i] = T(rng.NormFloat64())
	}
	want := append([]T(nil), dst...)
	for i := range n {
		want[i+1] += src[i+1]
	}
	got := append([]T(nil), dst...)
	Add(got[1:n+1], src[1:])
	require.Equal(t, want, got, "Add n=%d", n)

	v := T(rng.NormFloat64())
	for i := range n {
		want[i+1] += v
	}
	AddConst(got[1:n+1], v)
	require.Equal(t, want, got, "AddConst n=%d", n)
}
