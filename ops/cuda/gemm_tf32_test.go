//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// tf32Bound is the TF32 GEMM's tolerance against the plain float32 kernel:
// each input is rounded to a 10-bit mantissa (relative error up to 2^-11),
// so each product a·b is within 2^-10 of the float32 one, and the sum
// within 2^-10·Σ|a·b|; the bound allows twice that for the tensor cores'
// float32 accumulation, plus the float32 kernel's own rounding (tolGEMM).
func tf32Bound(sumAbs, want float64) float64 {
	return math.Ldexp(sumAbs, -9) + tolGEMM.atol + tolGEMM.rtol*math.Abs(want)
}

func TestGemmTF32(t *testing.T) {
	if !dev.SetTF32(true) {
		t.Skip("no TF32 tensor cores on ", dev.Name(), ": GEMMs keep the float32 kernel")
	}
	require.False(t, dev.SetTF32(false), "SetTF32(false) turns TF32 off")
	t.Cleanup(func() { dev.SetTF32(false) })
	rng := tensor.NewRNG(41)
	for _, s := range [][3]int{{1, 1, 1}, {128, 128, 16}, {129, 127, 17}, {130, 7, 300}, {3, 200, 1}, {5, 9, 0}, {257, 513, 65}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprint(s, tr), func(t *testing.T) {
				ar, ac := m, k
				if tr[0] {
					ar, ac = k, m
				}
				br, bc := k, n
				if tr[1] {
					br, bc = n, k
				}
				a, b, c := randn(t, rng, ar, ac), randn(t, rng, br, bc), randn(t, rng, m, n)
				ab, bb := up(t, a), up(t, b)
				const alpha, beta = 1.5, 0.5
				run := func(tf32 bool) *tensor.Tensor {
					dev.SetTF32(tf32)
					cb := up(t, c)
					require.NoError(t, dev.Gemm(tr[0], tr[1], m, n, k, alpha, ab, ac, bb, bc, beta, cb, n))
					h, err := cb.Download()
					require.NoError(t, err)
					return h
				}
				want, got := run(false), run(true)
				absA, absB := a.Clone(), b.Clone()
				for _, x := range []*tensor.Tensor{absA, absB} {
					for i, v := range x.Float32s() {
						x.Float32s()[i] = float32(math.Abs(float64(v)))
					}
				}
				sumAbs := tensor.Zeros(tensor.Float32, m, n)
				gemm.Gemm(tr[0], tr[1], m, n, k, alpha, absA.Float32s(), ac, absB.Float32s(), bc, 0, sumAbs.Float32s(), n)
				for i := 0; i < m*n; i++ {
					w, g := want.At(i), got.At(i)
					require.LessOrEqual(t, math.Abs(g-w), tf32Bound(sumAbs.At(i), w),
						"element %d: TF32 %v, float32 %v, Σ|a·b| %v", i, g, w, sumAbs.At(i))
				}
			})
		}
	}
}

// BenchmarkGemm1024TF32 is BenchmarkGemm1024 on the TF32 tensor cores.
func BenchmarkGemm1024TF32(b *testing.B) {
	if !dev.SetTF32(true) {
		b.Skip("no TF32 tensor cores on ", dev.Name())
	}
	b.Cleanup(func() { dev.SetTF32(false) })
	const n = 1024
	x, y, c := upB(b, n, n), upB(b, n, n), upB(b, n, n)
	b.ResetTimer()
	for b.Loop() {
		if err := dev.Gemm(false, false, n, n, n, 1, x, n, y, n, 0, c, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*n*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
