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
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
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
