package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "matmul", Inputs: []string{"a", "b"}, Grads: []int{0, 1},
		Make: MakeOp(func(a MatMulAttrs) Op { return MatMulOp(a.TransposeA, a.TransposeB) }), CUDA: DeviceKernel})
}

// MatMulAttrs are matmul's attributes: whether it transposes a and b.
type MatMulAttrs struct {
	TransposeA bool `json:"transpose_a"`
	TransposeB bool `json:"transpose_b"`
}

type matmulOp struct{ transA, transB bool }

// MatMulOp returns the op op(a)·op(b), where op(x) is x or, when the flag
// is set, x with its last two axes swapped (tf.linalg.matmul's
// transpose_a/transpose_b). a and b are 2-D, or batched [..., M, K] with
// equal leading dims; a batched a may also take a 2-D b shared by every batch.
func MatMulOp(transA, transB bool) Op { return &matmulOp{transA, transB} }

// MatMul returns op(a)·op(b); see MatMulOp.
func MatMul(a, b *tensor.Tensor, transA, transB bool) (*tensor.Tensor, error) {
	return run(MatMulOp(transA, transB), a, b)
}

func (o *matmulOp) Name() string { return "matmul" }

// dims returns the batch count, M, N, K and whether b is shared across batches.
func (o *matmulOp) dims(in []*tensor.Tensor) (batch, m, n, k int, shared bool, outShape tensor.Shape, err error) {
	a, b := in[0].Shape(), in[1].Shape()
	if len(a) < 2 || len(b) < 2 {
		return 0, 0, 0, 0, false, nil, Errorf("matmul", in, "want rank >= 2 operands")
	}
	shared = len(b) == 2 && len(a) > 2
	if !shared && !a[:len(a)-2].Equal(b[:len(b)-2]) {
		return 0, 0, 0, 0, false, nil, Errorf("matmul", in, "batch dims %v and %v differ", a[:len(a)-2], b[:len(b)-2])
	}
	m, ka := a[len(a)-2], a[len(a)-1]
	if o.transA {
		m, ka = ka, m
	}
	kb, n := b[len(b)-2], b[len(b)-1]
	if o.transB {
		kb, n = n, kb
	}
	if ka != kb {
		return 0, 0, 0, 0, false, nil, Errorf("matmul", in, "inner dims differ: %d vs %d (transA=%v transB=%v)", ka, kb, o.transA, o.transB)
	}
	outShape = append(a[:len(a)-2].Clone(), m, n)
	return a[:len(a)-2].Size(), m, n, ka, shared, outShape, nil
}

// Check is matmul's device-free check (Checker).
func (o *matmulOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("matmul", in, 2); err != nil {
		return err
	}
	_, _, _, _, _, _, err := o.dims(in)
	return err
}

func (o *matmulOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("matmul", in, 2)
	if err != nil {
		return nil, err
	}
	batch, m, n, k, shared, shape, err := o.dims(in)
	if err != nil {
		return nil, err
	}
	out := tensor.Empty(dt, shape...) // each product has beta 0: written whole
	o.into(out, in, batch, m, n, k, shared)
	return out, nil
}

// into runs matmulKernel on validated inputs into out.
func (o *matmulOp) into(out *tensor.Tensor, in []*tensor.Tensor, batch, m, n, k int, shared bool) {
	switch out.DType() {
	case tensor.Float32:
		matmulKernel(o.transA, o.transB, batch, m, n, k, shared, in[0].Float32s(), in[1].Float32s(), out.Float32s())
	case tensor.Float64:
		matmulKernel(o.transA, o.transB, batch, m, n, k, shared, in[0].Float64s(), in[1].Float64s(), out.Float64s())
	}
}

// ld returns the stored row length of an operand whose op() is rows×cols.
func ld(trans bool, rows, cols int) int {
	if trans {
		return rows
	}
	return cols
}

func matmulKernel[T tensor.Float](ta, tb bool, batch, m, n, k int, shared bool, a, b, c []T) {
	bStride := k * n
	if shared {
		bStride = 0
	}
	for i := 0; i < batch; i++ {
		gemm.Gemm(ta, tb, m, n, k, 1, a[i*m*k:], ld(ta, m, k), b[i*bStride:], ld(tb, k, n), 0, c[i*m*n:], n)
	}
}

func (o *matmulOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	batch, m, n, k, shared, _, _ := o.dims(in)
	grads := wantedGrads(in, need)
	switch out.DType() {
	case tensor.Float32:
		matmulGrad(o.transA, o.transB, batch, m, n, k, shared, in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]))
	case tensor.Float64:
		matmulGrad(o.transA, o.transB, batch, m, n, k, shared, in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]))
	}
	return grads, nil
}

// floats returns t's data, or nil for a nil tensor (an unwanted gradient).
func floats[T tensor.Float](t *tensor.Tensor) []T {
	if t == nil {
		return nil
	}
	return tensor.Data[T](t)
}

// matmulGrad: for C = op(A)·op(B),
//
//	dA = dC·op(B)ᵀ (stored as its transpose when transA), dB = op(A)ᵀ·dC (likewise).
//
// A shared 2-D B sums its gradient over the batch (beta = 1).
func matmulGrad[T tensor.Float](ta, tb bool, batch, m, n, k int, shared bool, a, b, dc, da, db []T) {
	bStride := k * n
	if shared {
		bStride = 0
	}
	for i := 0; i < batch; i++ {
		ai, bi, ci := a[i*m*k:], b[i*bStride:], dc[i*m*n:]
		if da != nil {
			if !ta { // dA[m,k] = dC[m,n]·op(B)ᵀ
				gemm.Gemm(false, !tb, m, k, n, 1, ci, n, bi, ld(tb, k, n), 0, da[i*m*k:], k)
			} else { // dA stored [k,m] = op(B)·dCᵀ
				gemm.Gemm(tb, true, k, m, n, 1, bi, ld(tb, k, n), ci, n, 0, da[i*m*k:], m)
			}
		}
		if db != nil {
			beta := T(0)
			if shared && i > 0 {
				beta = 1
			}
			if !tb { // dB[k,n] = op(A)ᵀ·dC
				gemm.Gemm(!ta, false, k, n, m, 1, ai, ld(ta, m, k), ci, n, beta, db[i*bStride:], n)
			} else { // dB stored [n,k] = dCᵀ·op(A)
				gemm.Gemm(true, ta, n, k, m, 1, ci, n, ai, ld(ta, m, k), beta, db[i*bStride:], k)
			}
		}
	}
}
