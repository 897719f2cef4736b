package ops

import (
	"sync/atomic"

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

type matmulOp struct {
	transA, transB bool
	// last is the geometry of ForwardInto's last operand shapes: a plan
	// runs one op instance on fixed shapes, so later calls reuse it
	// instead of deriving (and allocating) it again.
	last atomic.Pointer[matmulMemo]
}

// matmulMemo is a geometry and the operand shapes it was derived for;
// never changed once stored, so calls on many goroutines can share it.
type matmulMemo struct {
	a, b tensor.Shape
	g    matmulGeom
}

// memoGeom is geom through o.last: the stored geometry when the operands'
// shapes are those it was derived for, else a new one, stored.
func (o *matmulOp) memoGeom(in []*tensor.Tensor) (*matmulGeom, error) {
	if m := o.last.Load(); m != nil && m.a.Equal(in[0].Shape()) && m.b.Equal(in[1].Shape()) {
		return &m.g, nil
	}
	g, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	m := &matmulMemo{a: in[0].Shape().Clone(), b: in[1].Shape().Clone(), g: g}
	o.last.Store(m)
	return &m.g, nil
}

// MatMulOp returns the op op(a)·op(b), where op(x) is x or, when the flag
// is set, x with its last two axes swapped (tf.linalg.matmul's
// transpose_a/transpose_b), with NumPy matmul semantics otherwise (ONNX
// MatMul, numpy.matmul): operands of rank >= 2 are stacks of matrices over
// their leading (batch) dims, which broadcast against each other as in
// BroadcastShapes, so [2, 1, M, K]·[3, K, N] is [2, 3, M, N]; a 1-D a is
// promoted to a [1, K] row and a 1-D b to a [K, 1] column, and the
// promoted axis is dropped from the output. A transpose flag on a 1-D
// operand is an error. The gradient of a broadcast operand is summed over
// the batch entries that shared it.
func MatMulOp(transA, transB bool) Op { return &matmulOp{transA: transA, transB: transB} }

// MatMul returns op(a)·op(b); see MatMulOp.
func MatMul(a, b *tensor.Tensor, transA, transB bool) (*tensor.Tensor, error) {
	return run(MatMulOp(transA, transB), a, b)
}

func (o *matmulOp) Name() string { return "matmul" }

// matmulGeom is matmul's validated geometry: batch products of op(a) m×k by
// op(b) k×n, product i reading a's matrix aIdx[i] and b's matrix bIdx[i]
// (batch indices within each operand's own, unbroadcast, batch dims).
type matmulGeom struct {
	batch, m, n, k int
	aIdx, bIdx     []int
	aN, bN         int // the operands' batch entry counts
	// fold: b is one matrix shared by every product and a is not
	// transposed, so the products are one GEMM of batch·m rows.
	fold bool
	out  tensor.Shape
}

// geom validates the operands' ranks and dims and derives the geometry.
func (o *matmulOp) geom(in []*tensor.Tensor) (matmulGeom, error) {
	var g matmulGeom
	a, b := in[0].Shape(), in[1].Shape()
	if len(a) == 0 || len(b) == 0 {
		return g, Errorf("matmul", in, "want operands of rank >= 1, got ranks %d and %d", len(a), len(b))
	}
	if (len(a) == 1 && o.transA) || (len(b) == 1 && o.transB) {
		return g, Errorf("matmul", in, "a transpose flag on a 1-D operand (transA=%v transB=%v)", o.transA, o.transB)
	}
	va, vb := a, b // the matrix views: 1-D promoted
	if len(a) == 1 {
		va = tensor.Shape{1, a[0]}
	}
	if len(b) == 1 {
		vb = tensor.Shape{b[0], 1}
	}
	m, ka := va[len(va)-2], va[len(va)-1]
	if o.transA {
		m, ka = ka, m
	}
	kb, n := vb[len(vb)-2], vb[len(vb)-1]
	if o.transB {
		kb, n = n, kb
	}
	if ka != kb {
		return g, Errorf("matmul", in, "inner dims differ: %d vs %d (transA=%v transB=%v)", ka, kb, o.transA, o.transB)
	}
	ab, bb := va[:len(va)-2], vb[:len(vb)-2]
	batch, err := BroadcastShapes(ab, bb)
	if err != nil {
		return g, Errorf("matmul", in, "batch dims %v and %v do not broadcast", ab, bb)
	}
	g.batch, g.m, g.n, g.k = batch.Size(), m, n, ka
	g.out = batch.Clone()
	if len(a) > 1 {
		g.out = append(g.out, m)
	}
	if len(b) > 1 {
		g.out = append(g.out, n)
	}
	g.aIdx, g.bIdx = batchIndex(ab, batch), batchIndex(bb, batch)
	g.aN, g.bN = ab.Size(), bb.Size()
	g.fold = bb.Size() == 1 && !o.transA && g.batch > 1
	return g, nil
}

// batchIndex returns, for each entry of the broadcast batch shape out in
// row-major order, the index of the entry of batch shape s it reads.
func batchIndex(s, out tensor.Shape) []int {
	idx := make([]int, out.Size())
	bcastRuns(out, [][]int{bcastStrides(s, out)}, func(o int, offs, step []int, n int) {
		for i := 0; i < n; i++ {
			idx[o+i] = offs[0] + i*step[0]
		}
	})
	return idx
}

// Check is matmul's device-free check (Checker).
func (o *matmulOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("matmul", in, 2); err != nil {
		return err
	}
	_, err := o.geom(in)
	return err
}

func (o *matmulOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("matmul", in, 2)
	if err != nil {
		return nil, err
	}
	g, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	out := tensor.Empty(dt, g.out...) // each product has beta 0: written whole
	o.into(out, in, &g)
	return out, nil
}

// into runs matmulKernel on validated inputs into out.
func (o *matmulOp) into(out *tensor.Tensor, in []*tensor.Tensor, g *matmulGeom) {
	switch out.DType() {
	case tensor.Float32:
		matmulKernel(o.transA, o.transB, g, in[0].Float32s(), in[1].Float32s(), out.Float32s())
	case tensor.Float64:
		matmulKernel(o.transA, o.transB, g, in[0].Float64s(), in[1].Float64s(), out.Float64s())
	}
}

// ld returns the stored row length of an operand whose op() is rows×cols.
func ld(trans bool, rows, cols int) int {
	if trans {
		return rows
	}
	return cols
}

func matmulKernel[T tensor.Float](ta, tb bool, g *matmulGeom, a, b, c []T) {
	m, n, k := g.m, g.n, g.k
	if g.fold {
		gemm.Gemm(false, tb, g.batch*m, n, k, 1, a, k, b, ld(tb, k, n), 0, c, n)
		return
	}
	for i := 0; i < g.batch; i++ {
		gemm.Gemm(ta, tb, m, n, k, 1, a[g.aIdx[i]*m*k:], ld(ta, m, k), b[g.bIdx[i]*k*n:], ld(tb, k, n), 0, c[i*m*n:], n)
	}
}

func (o *matmulOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	grads := wantedGrads(in, need)
	switch out.DType() {
	case tensor.Float32:
		matmulGrad(o.transA, o.transB, &g, in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]))
	case tensor.Float64:
		matmulGrad(o.transA, o.transB, &g, in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]))
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
// An operand matrix read by several products (a broadcast batch entry)
// accumulates their gradients: the first product writes it (beta 0), the
// others add (beta 1); da and db arrive zeroed, so a matrix no product
// reads (an empty broadcast batch) keeps a zero gradient.
func matmulGrad[T tensor.Float](ta, tb bool, g *matmulGeom, a, b, dc, da, db []T) {
	m, n, k := g.m, g.n, g.k
	if g.fold { // one GEMM over batch·m rows; b and db are one matrix
		if da != nil {
			gemm.Gemm(false, !tb, g.batch*m, k, n, 1, dc, n, b, ld(tb, k, n), 0, da, k)
		}
		if db != nil {
			if !tb {
				gemm.Gemm(true, false, k, n, g.batch*m, 1, a, k, dc, n, 0, db, n)
			} else {
				gemm.Gemm(true, false, n, k, g.batch*m, 1, dc, n, a, k, 0, db, k)
			}
		}
		return
	}
	seenA, seenB := make([]bool, g.aN), make([]bool, g.bN)
	for i := 0; i < g.batch; i++ {
		ai, bi, ci := a[g.aIdx[i]*m*k:], b[g.bIdx[i]*k*n:], dc[i*m*n:]
		if da != nil {
			beta := accumulate[T](seenA, g.aIdx[i])
			dai := da[g.aIdx[i]*m*k:]
			if !ta { // dA[m,k] = dC[m,n]·op(B)ᵀ
				gemm.Gemm(false, !tb, m, k, n, 1, ci, n, bi, ld(tb, k, n), beta, dai, k)
			} else { // dA stored [k,m] = op(B)·dCᵀ
				gemm.Gemm(tb, true, k, m, n, 1, bi, ld(tb, k, n), ci, n, beta, dai, m)
			}
		}
		if db != nil {
			beta := accumulate[T](seenB, g.bIdx[i])
			dbi := db[g.bIdx[i]*k*n:]
			if !tb { // dB[k,n] = op(A)ᵀ·dC
				gemm.Gemm(!ta, false, k, n, m, 1, ai, ld(ta, m, k), ci, n, beta, dbi, n)
			} else { // dB stored [n,k] = dCᵀ·op(A)
				gemm.Gemm(true, ta, n, k, m, 1, ci, n, ai, ld(ta, m, k), beta, dbi, k)
			}
		}
	}
}

// accumulate returns the GEMM's beta for a write into gradient matrix j:
// 0 the first time (overwrite), 1 after (add), marking j seen.
func accumulate[T tensor.Float](seen []bool, j int) T {
	if seen[j] {
		return 1
	}
	seen[j] = true
	return 0
}
