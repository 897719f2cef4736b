package gemm

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShape is one product benchmarked as op(A) m×k times op(B) k×n; the
// same list, names and transposes are timed for OpenBLAS by
// bench/openblas/gemm.c.
type benchShape struct {
	name    string
	ta, tb  bool
	m, n, k int
}

var benchShapes = []benchShape{
	{"1024x1024x1024", false, false, 1024, 1024, 1024},
	{"64x784x128", false, false, 64, 128, 784},    // MLP layer forward: x·W
	{"784x128_k64_TN", true, false, 784, 128, 64}, // its weight gradient xᵀ·dy
	{"64x784_k128_NT", false, true, 64, 784, 128}, // its input gradient dy·Wᵀ
	{"32x256x1024", false, false, 32, 1024, 256},  // LSTM input projection
	{"32x1024x256", false, false, 32, 256, 1024},  // LSTM recurrent-sized product
	{"1x784x128", false, false, 1, 128, 784},      // batch-1 inference
}

// TestMain prints the path this process chose, with its timings, at the
// top of a benchmark run's output, so that every figure below it says
// which kernels it timed.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		fmt.Println(Path())
	}
	os.Exit(m.Run())
}

// operands returns A, B, C for s with leading dimensions as stored.
func (s benchShape) operands() (a, b, c []float64, lda, ldb int) {
	rng := rand.New(rand.NewPCG(9, 10))
	lda, ldb = s.k, s.n
	if s.ta {
		lda = s.m
	}
	if s.tb {
		ldb = s.k
	}
	return randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float64, s.m*s.n), lda, ldb
}

func reportGFLOPS(b *testing.B, s benchShape) {
	b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			a, bb, c, lda, ldb := s.operands()
			a32, b32, c32 := f32(a), f32(bb), f32(c)
			b.ResetTimer()
			for range b.N {
				Gemm(s.ta, s.tb, s.m, s.n, s.k, 1, a32, lda, b32, ldb, 0, c32, s.n)
			}
			reportGFLOPS(b, s)
		})
	}
}

func BenchmarkDgemm(b *testing.B) {
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			a, bb, c, lda, ldb := s.operands()
			b.ResetTimer()
			for range b.N {
				Gemm(s.ta, s.tb, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
			}
			reportGFLOPS(b, s)
		})
	}
}

// BenchmarkSgemmPaths times 1024³ and the cube the choice is timed on
// with each assembly path this CPU has, whichever was chosen.
func BenchmarkSgemmPaths(b *testing.B) {
	for _, s := range []benchShape{benchShapes[0], {"timed", false, false, timedSize, timedSize, timedSize}} {
		for _, p := range []path{pathAVX2, pathAVX512} {
			b.Run(s.name+"/"+pathNames[p], func(b *testing.B) {
				if configs32[p] == nil {
					b.Skipf("this CPU lacks %s", pathNeeds[p])
				}
				chooseOnce()
				old := active
				active = p
				defer func() { active = old }()
				a, bb, c, lda, ldb := s.operands()
				a32, b32, c32 := f32(a), f32(bb), f32(c)
				b.ResetTimer()
				for range b.N {
					Gemm(s.ta, s.tb, s.m, s.n, s.k, 1, a32, lda, b32, ldb, 0, c32, s.n)
				}
				reportGFLOPS(b, s)
			})
		}
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// BenchmarkGonumSgemm times gonum's pure-Go BLAS, what Gemm used before, on
// the same shapes.
func BenchmarkGonumSgemm(b *testing.B) {
	var impl gonum.Implementation
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			a, bb, c, lda, ldb := s.operands()
			a32, b32, c32 := f32(a), f32(bb), f32(c)
			b.ResetTimer()
			for range b.N {
				impl.Sgemm(trans(s.ta), trans(s.tb), s.m, s.n, s.k, 1, a32, lda, b32, ldb, 0, c32, s.n)
			}
			reportGFLOPS(b, s)
		})
	}
}

func BenchmarkGonumDgemm(b *testing.B) {
	var impl gonum.Implementation
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			a, bb, c, lda, ldb := s.operands()
			b.ResetTimer()
			for range b.N {
				impl.Dgemm(trans(s.ta), trans(s.tb), s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
			}
			reportGFLOPS(b, s)
		})
	}
}

// BenchmarkSgemmWeightGrad times a weight gradient of the stacked LSTM's
// fc layers, C [640, 512] = xᵀ·dy over the 29,800 words of 128 reviews:
// with k that large, every part run cuts packs a large operand again.
func BenchmarkSgemmWeightGrad(b *testing.B) {
	s := benchShape{"640x512_k29800_TN", true, false, 640, 512, 29800}
	a, bb, c, lda, ldb := s.operands()
	a32, b32, c32 := f32(a), f32(bb), f32(c)
	b.ResetTimer()
	for range b.N {
		Gemm(s.ta, s.tb, s.m, s.n, s.k, 1, a32, lda, b32, ldb, 0, c32, s.n)
	}
	reportGFLOPS(b, s)
}
