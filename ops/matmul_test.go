package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("matmul",
	gradCase{name: "2d", attrs: Attrs{TransposeA: false, TransposeB: false}, in: ins(randn(1, 3, 4), randn(2, 4, 5)), wrt: []int{0, 1}},
	gradCase{name: "transA", attrs: Attrs{TransposeA: true, TransposeB: false}, in: ins(randn(3, 4, 3), randn(4, 4, 5)), wrt: []int{0, 1}},
	gradCase{name: "transB", attrs: Attrs{TransposeA: false, TransposeB: true}, in: ins(randn(5, 3, 4), randn(6, 5, 4)), wrt: []int{0, 1}},
	gradCase{name: "transAB", attrs: Attrs{TransposeA: true, TransposeB: true}, in: ins(randn(7, 4, 3), randn(8, 5, 4)), wrt: []int{0, 1}},
	gradCase{name: "batched", attrs: Attrs{TransposeA: false, TransposeB: true}, in: ins(randn(9, 2, 3, 4), randn(10, 2, 5, 4)), wrt: []int{0, 1}},
	gradCase{name: "sharedB", attrs: Attrs{TransposeA: true, TransposeB: false}, in: ins(randn(11, 3, 4, 2), randn(12, 4, 5)), wrt: []int{0, 1}},
)

// naiveMatMul is the textbook triple loop on op(a), op(b) for 2-D inputs.
func naiveMatMul(a, b *tensor.Tensor, ta, tb bool) *tensor.Tensor {
	if ta {
		a, _ = a.Transpose()
	}
	if tb {
		b, _ = b.Transpose()
	}
	m, k, n := a.Dim(0), a.Dim(1), b.Dim(1)
	c := tensor.Zeros(tensor.Float64, m, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				s += a.At(i*k+p) * b.At(p*n+j)
			}
			c.Float64s()[i*n+j] = s
		}
	}
	return c
}

func TestMatMulMatchesNaive(t *testing.T) {
	for _, c := range []struct {
		m, k, n int
		ta, tb  bool
	}{{1, 1, 1, false, false}, {3, 17, 5, false, false}, {17, 3, 1, true, false}, {4, 9, 13, false, true}, {6, 2, 7, true, true}, {2, 0, 3, false, false}} {
		a := randn(1, c.m, c.k)
		if c.ta {
			a = randn(1, c.k, c.m)
		}
		b := randn(2, c.k, c.n)
		if c.tb {
			b = randn(2, c.n, c.k)
		}
		got, err := MatMul(a, b, c.ta, c.tb)
		require.NoError(t, err)
		requireClose(t, naiveMatMul(a, b, c.ta, c.tb), got, 1e-12, 1e-12)
		checkDTypes(t, func() Op { return MatMulOp(c.ta, c.tb) }, a, b)
	}
}

func TestMatMulErrors(t *testing.T) {
	_, err := MatMul(tensor.Zeros(tensor.Float32, 2, 3), tensor.Zeros(tensor.Float32, 4, 5), false, false)
	require.ErrorContains(t, err, "matmul: inputs float32[2 3], float32[4 5]: inner dims differ: 3 vs 4")
	_, err = MatMul(tensor.Zeros(tensor.Float32, 2, 2, 3), tensor.Zeros(tensor.Float32, 3, 3, 5), false, false)
	require.ErrorContains(t, err, "batch dims")
	_, err = MatMul(tensor.Zeros(tensor.Float32, 3), tensor.Zeros(tensor.Float32, 3, 5), false, false)
	require.ErrorContains(t, err, "rank")
}
