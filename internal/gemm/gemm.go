// Package gemm is the single matrix-multiply entry point that every Plumb
// kernel (matmul, linear, conv via im2col, LSTM projections) calls.
//
// Today it forwards to gonum's pure-Go BLAS (gonum.org/v1/gonum/blas/gonum):
// the fastest pure-Go GEMM we have measured here (about 15 GFLOP/s float32 on
// 2 cores at 1024³), and already in the module graph through Gorgonia. The
// packed, assembly micro-kernel GEMM replaces it behind this same function,
// so no caller changes when it lands.
package gemm

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

var impl gonum.Implementation

// Float is the set of element types GEMM computes in.
type Float interface{ float32 | float64 }

// Gemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices, where
// op(X) is X or Xᵀ. op(A) is m×k, op(B) is k×n, C is m×n; lda, ldb and ldc
// are the row strides of A, B and C as stored. With beta == 0, C need not be
// initialised. Callers validate shapes; Gemm assumes they fit.
func Gemm[T Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scale(c, m, n, ldc, beta)
		return
	}
	if transA {
		// gonum's Aᵀ·B loop sweeps all of C once per row of A, which falls
		// out of cache for weight gradients such as xᵀ·dy (784×128 from 64
		// rows): copying Aᵀ (m·k elements, cheap next to m·n·k) and taking
		// the row-major A·B path is about twice as fast on those shapes.
		buf := getScratch[T](m * k)
		defer putScratch(buf)
		at := *buf
		for r := 0; r < k; r++ {
			row := a[r*lda : r*lda+m]
			for i, v := range row {
				at[i*k+r] = v
			}
		}
		a, lda = at, k
	}
	if p := splits(m, n, k); p > 1 {
		parallel(p, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	serial(transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// minSplitWork is the multiply-add count above which a product that gonum
// would run on one core is split across cores; below it goroutine start-up
// costs more than it saves.
const minSplitWork = 1 << 18

// splits returns how many parts to cut a product into: gonum parallelises
// only products with at least 4 blocks of 64×64 in C, so the thin shapes
// of models (64×128 with k 784: one MLP layer on a batch) would use one core.
func splits(m, n, k int) int {
	p := runtime.GOMAXPROCS(0)
	if p < 2 || m*n*k < minSplitWork || ceilDiv(m, 64)*ceilDiv(n, 64) >= 4 {
		return 1
	}
	return min(p, max(m, n))
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// parallel cuts C into p bands of rows (or of columns when C is wider than
// tall) and multiplies each band on its own goroutine. A is untransposed here.
func parallel[T Float](p int, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	var wg sync.WaitGroup
	byRows := m >= n
	total := n
	if byRows {
		total = m
	}
	for i := 0; i < p; i++ {
		lo, hi := i*total/p, (i+1)*total/p
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if byRows {
				serial(transB, hi-lo, n, k, alpha, a[lo*lda:], lda, b, ldb, beta, c[lo*ldc:], ldc)
				return
			}
			bOff := lo * ldb // rows of Bᵀ are columns of op(B)
			if !transB {
				bOff = lo
			}
			serial(transB, m, hi-lo, k, alpha, a, lda, b[bOff:], ldb, beta, c[lo:], ldc)
		}()
	}
	wg.Wait()
}

// serial is one gonum call on an untransposed A.
func serial[T Float](transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if transB {
		tb = blas.Trans
	}
	switch cc := any(c).(type) {
	case []float32:
		impl.Sgemm(ta, tb, m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), cc, ldc)
	case []float64:
		impl.Dgemm(ta, tb, m, n, k, float64(alpha), any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), cc, ldc)
	}
}

func scale[T Float](c []T, m, n, ldc int, beta T) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		for j := range row {
			if beta == 0 {
				row[j] = 0
			} else {
				row[j] *= beta
			}
		}
	}
}

var scratch32, scratch64 sync.Pool

// getScratch returns a pooled slice of n elements (contents undefined).
func getScratch[T Float](n int) *[]T {
	pool := &scratch64
	if _, ok := any(T(0)).(float32); ok {
		pool = &scratch32
	}
	if p, ok := pool.Get().(*[]T); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]T, n)
	return &s
}

func putScratch[T Float](p *[]T) {
	if _, ok := any(T(0)).(float32); ok {
		scratch32.Put(p)
		return
	}
	scratch64.Put(p)
}
