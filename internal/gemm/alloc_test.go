//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean nothing under -race; this file is built without it.

package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// After warm-up the packing buffers come from the pool: a product
// allocates nothing.
func TestNoAllocAfterWarmUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range [][3]int{{64, 128, 784}, {31, 45, 300}} {
		m, n, k := s[0], s[1], s[2]
		a, b, c := f32(randSlice(rng, m*k)), f32(randSlice(rng, k*n)), make([]float32, m*n)
		Gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n)
		allocs := testing.AllocsPerRun(20, func() { Gemm(false, true, m, n, k, 1, a, k, b, k, 0, c, n) })
		require.Zerof(t, allocs, "m=%d n=%d k=%d", m, n, k)
	}
	// m = 1 goes to the row kernel, through a buffer that must stay on the
	// stack.
	a, b, c := f32(randSlice(rng, 784)), f32(randSlice(rng, 784*128)), make([]float32, 128)
	for _, beta := range []float32{0, 0.5} {
		allocs := testing.AllocsPerRun(20, func() { Gemm(false, false, 1, 128, 784, 1, a, 784, b, 128, beta, c, 128) })
		require.Zerof(t, allocs, "m=1 n=128 k=784 beta=%v", beta)
	}
}
