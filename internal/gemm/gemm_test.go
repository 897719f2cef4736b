package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// naive computes alpha·op(A)·op(B) + beta·C with the textbook triple loop.
func naive(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				var av, bv float64
				if ta {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tb {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.NormFloat64()
	}
	return s
}

func TestGemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {3, 17, 5}, {17, 3, 127}, {64, 128, 784}, {2, 513, 300}, {513, 2, 300}, {65, 1, 4100}, {7, 9, 0}}
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, ab := range [][2]float64{{1, 0}, {0.5, 2}} {
					lda, ldb, ldc := k+1, n+2, n+3 // padded strides
					if ta {
						lda = m + 1
					}
					if tb {
						ldb = k + 2
					}
					rowsA, rowsB := m, k
					if ta {
						rowsA = k
					}
					if tb {
						rowsB = n
					}
					a, b := randSlice(rng, rowsA*lda), randSlice(rng, rowsB*ldb)
					c := randSlice(rng, m*ldc)
					cOrig := append([]float64(nil), c...)
					want := append([]float64(nil), c...)
					naive(ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
					Gemm(ta, tb, m, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
					require.InDeltaSlicef(t, want, c, 1e-9, "m=%d n=%d k=%d ta=%v tb=%v alpha,beta=%v", m, n, k, ta, tb, ab)

					// float32 on the same values agrees within float32 round-off of a k-term sum.
					c32 := f32(cOrig)
					Gemm(ta, tb, m, n, k, float32(ab[0]), f32(a), lda, f32(b), ldb, float32(ab[1]), c32, ldc)
					for i, w := range want {
						require.InDeltaf(t, w, float64(c32[i]), 1e-5*float64(k+1)*(1+abs(w)), "float32 element %d", i)
					}
				}
			}
		}
	}
}

func f32(s []float64) []float32 {
	out := make([]float32, len(s))
	for i, v := range s {
		out[i] = float32(v)
	}
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// The banded split agrees with one serial call whatever the core count,
// cutting rows (tall C) or columns (wide C), with B either way round.
func TestParallelBands(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{{10, 3, 7}, {3, 11, 5}, {2, 2, 9}} {
		m, n, k := s[0], s[1], s[2]
		for _, tb := range []bool{false, true} {
			ldb := n
			if tb {
				ldb = k
			}
			a, b := randSlice(rng, m*k), randSlice(rng, k*n)
			want, got := make([]float64, m*n), make([]float64, m*n)
			naive(false, tb, m, n, k, 1, a, k, b, ldb, 0, want, n)
			parallel(3, tb, m, n, k, 1, a, k, b, ldb, 0, got, n)
			require.InDeltaSlicef(t, want, got, 1e-12, "m=%d n=%d k=%d tb=%v", m, n, k, tb)
		}
	}
}
