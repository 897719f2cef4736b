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
	gradCase{name: "foldedB", attrs: Attrs{}, in: ins(randn(13, 2, 3, 4), randn(14, 4, 5)), wrt: []int{0, 1}},
	gradCase{name: "foldedB_transB", attrs: Attrs{TransposeB: true}, in: ins(randn(15, 2, 1, 3, 4), randn(16, 1, 5, 4)), wrt: []int{0, 1}},
	gradCase{name: "bcast_both", attrs: Attrs{}, in: ins(randn(17, 2, 1, 3, 4), randn(18, 3, 4, 2)), wrt: []int{0, 1}},
	gradCase{name: "bcast_transAB", attrs: Attrs{TransposeA: true, TransposeB: true}, in: ins(randn(19, 1, 4, 3), randn(20, 2, 1, 5, 4)), wrt: []int{0, 1}},
	gradCase{name: "vec_a", attrs: Attrs{}, in: ins(randn(21, 4), randn(22, 2, 4, 3)), wrt: []int{0, 1}},
	gradCase{name: "vec_b", attrs: Attrs{}, in: ins(randn(23, 2, 3, 4), randn(24, 4)), wrt: []int{0, 1}},
	gradCase{name: "vec_vec", attrs: Attrs{}, in: ins(randn(25, 5), randn(26, 5)), wrt: []int{0, 1}},
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
	require.ErrorContains(t, err, "matmul: inputs float32[2 2 3], float32[3 3 5]: batch dims [2] and [3] do not broadcast")
	_, err = MatMul(tensor.Zeros(tensor.Float32, 3), tensor.Zeros(tensor.Float32, 3, 5), true, false)
	require.ErrorContains(t, err, "matmul: inputs float32[3], float32[3 5]: a transpose flag on a 1-D operand")
	_, err = MatMul(tensor.Zeros(tensor.Float32), tensor.Zeros(tensor.Float32, 3, 5), false, false)
	require.ErrorContains(t, err, "want operands of rank >= 1, got ranks 0 and 2")
	_, err = MatMul(tensor.Zeros(tensor.Float32, 2, 2, 3), tensor.Zeros(tensor.Float32, 4), false, false)
	require.ErrorContains(t, err, "matmul: inputs float32[2 2 3], float32[4]: inner dims differ: 3 vs 4")
}

// naiveBatchedMatMul is numpy.matmul on op(a), op(b) by index arithmetic:
// 1-D operands promoted and their axis dropped, batch dims broadcast by
// reading index 0 along an axis of size 1.
func naiveBatchedMatMul(a, b *tensor.Tensor, ta, tb bool) *tensor.Tensor {
	as, bs := a.Shape().Clone(), b.Shape().Clone()
	if len(as) == 1 {
		as = tensor.Shape{1, as[0]}
	}
	if len(bs) == 1 {
		bs = tensor.Shape{bs[0], 1}
	}
	// el reads op(x)[batch..., i, j] for x stored with shape s.
	el := func(x *tensor.Tensor, s tensor.Shape, trans bool, batch []int, i, j int) float64 {
		if trans {
			i, j = j, i
		}
		off, stride := 0, 1
		idx := append(append([]int{}, batch...), i, j)
		for ax := len(s) - 1; ax >= 0; ax-- {
			v := idx[len(idx)-len(s)+ax]
			if s[ax] == 1 {
				v = 0
			}
			off += v * stride
			stride *= s[ax]
		}
		return x.At(off)
	}
	// dims returns op(x)'s rows and columns for x's matrix shape s.
	dims := func(s tensor.Shape, trans bool) (int, int) {
		if trans {
			return s[len(s)-1], s[len(s)-2]
		}
		return s[len(s)-2], s[len(s)-1]
	}
	m, k := dims(as, ta)
	_, n := dims(bs, tb)
	rank := max(len(as), len(bs)) - 2
	batch := make(tensor.Shape, rank)
	for ax := range batch {
		batch[ax] = 1
		for _, s := range []tensor.Shape{as, bs} {
			if j := ax - (rank - (len(s) - 2)); j >= 0 && s[j] != 1 {
				batch[ax] = s[j]
			}
		}
	}
	shape := batch.Clone()
	if a.Rank() > 1 {
		shape = append(shape, m)
	}
	if b.Rank() > 1 {
		shape = append(shape, n)
	}
	c := tensor.Zeros(tensor.Float64, shape...)
	pos := make([]int, rank)
	for bi := 0; bi < batch.Size(); bi++ {
		for r, rem := rank-1, bi; r >= 0; r-- {
			pos[r], rem = rem%batch[r], rem/batch[r]
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				s := 0.0
				for p := 0; p < k; p++ {
					s += el(a, as, ta, pos[len(pos)-(len(as)-2):], i, p) * el(b, bs, tb, pos[len(pos)-(len(bs)-2):], p, j)
				}
				c.Float64s()[(bi*m+i)*n+j] = s
			}
		}
	}
	return c
}

func TestMatMulBroadcastMatchesNaive(t *testing.T) {
	for i, c := range []struct {
		a, b   []int
		ta, tb bool
	}{
		{[]int{2, 1, 3, 4}, []int{3, 4, 5}, false, false},
		{[]int{1, 3, 4}, []int{2, 4, 5}, false, false},
		{[]int{5, 3, 4}, []int{1, 4, 2}, false, false},
		{[]int{5, 3, 4}, []int{2, 4}, false, true},
		{[]int{2, 3, 7, 4}, []int{7, 4}, true, false},
		{[]int{3, 1, 4, 3}, []int{1, 2, 5, 4}, true, true},
		{[]int{4}, []int{2, 3, 4, 3}, false, false},
		{[]int{2, 3, 4}, []int{4}, false, false},
		{[]int{3, 17, 5}, []int{17}, true, false},
		{[]int{9}, []int{9}, false, false},
		{[]int{4}, []int{4, 6}, false, false},
		{[]int{0, 3, 4}, []int{1, 4, 5}, false, false},
		{[]int{2, 3, 0}, []int{2, 1, 0, 5}, false, false},
		{[]int{1, 1, 1}, []int{3, 1, 1, 1}, false, false},
		{[]int{2, 33, 17}, []int{2, 1, 17, 19}, false, false},
	} {
		a, b := randn(uint64(2*i+1), c.a...), randn(uint64(2*i+2), c.b...)
		got, err := MatMul(a, b, c.ta, c.tb)
		require.NoError(t, err, "case %d", i)
		requireClose(t, naiveBatchedMatMul(a, b, c.ta, c.tb), got, 1e-12, 1e-12)
		checkDTypes(t, func() Op { return MatMulOp(c.ta, c.tb) }, a, b)
	}
}

// TestMatMulBroadcastGradient checks the gradients against the naive
// product's: d(sum(C∘G))/dA by the chain rule on the naive reference is
// the naive product of G with op(B), summed over A's broadcast batch.
func TestMatMulBroadcastGradient(t *testing.T) {
	for i, c := range []struct{ a, b []int }{
		{[]int{2, 1, 3, 4}, []int{3, 4, 5}},
		{[]int{5, 3, 4}, []int{1, 4, 2}},
		{[]int{0, 3, 4}, []int{1, 4, 5}},
		{[]int{4}, []int{2, 4, 3}},
	} {
		a, b := randn(uint64(3*i+1), c.a...), randn(uint64(3*i+2), c.b...)
		op := MatMulOp(false, false)
		out, err := op.Forward(ins(a, b))
		require.NoError(t, err)
		gout := randn(uint64(3*i+3), out.Shape()...)
		grads, err := op.Backward(ins(a, b), out, gout, []bool{true, true})
		require.NoError(t, err)
		// Perturbation-free check: <dA, δ> = <G, δ·B> for a random δ of
		// A's shape, and likewise for B, both sides by the naive product.
		da, db := randn(uint64(3*i+50), c.a...), randn(uint64(3*i+60), c.b...)
		dot := func(x, y *tensor.Tensor) float64 {
			s := 0.0
			for j := range x.Size() {
				s += x.At(j) * y.At(j)
			}
			return s
		}
		require.InDelta(t, dot(gout, naiveBatchedMatMul(da, b, false, false)), dot(grads[0], da), 1e-9, "case %d dA", i)
		require.InDelta(t, dot(gout, naiveBatchedMatMul(a, db, false, false)), dot(grads[1], db), 1e-9, "case %d dB", i)
	}
}

// BenchmarkMatMul runs float32 forward and backward on the shapes of a
// BERT-base layer at sequence 128: the projection x·W with a 2-D W shared
// by the batch (folded into one GEMM), the attention scores Q·Kᵀ with equal
// batch dims, and the same with K broadcast over the heads.
func BenchmarkMatMul(b *testing.B) {
	for _, c := range []struct {
		name   string
		a, b   []int
		ta, tb bool
	}{
		{"projection_8x128x768_768x768", []int{8, 128, 768}, []int{768, 768}, false, false},
		{"scores_8x12x128x64_transB", []int{8, 12, 128, 64}, []int{8, 12, 128, 64}, false, true},
		{"scores_bcast_heads_transB", []int{8, 12, 128, 64}, []int{8, 1, 128, 64}, false, true},
	} {
		x, y := f32(randn(1, c.a...)), f32(randn(2, c.b...))
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				op := MatMulOp(c.ta, c.tb)
				out, err := op.Forward(ins(x, y))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := op.Backward(ins(x, y), out, out, []bool{true, true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
