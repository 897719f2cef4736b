//go:build cuda

package cuda

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// gemmCall is one batched launch of the sgemm kernel: for z in [0, batch),
// C_z = alpha·op(A_z)·op(B_z) + beta·C_z with op(A) m×k and op(B) k×n,
// A_z at element offset (z mod modA)·strideA, B_z at z·strideB, C_z at
// z·strideC (each from the buffer's start plus the given offset).
type gemmCall struct {
	transA, transB   bool
	m, n, k, batch   int
	alpha, beta      float32
	a, b, c          *Buffer
	aOff, bOff, cOff int
	lda, ldb, ldc    int
	strideA, modA    int
	strideB, strideC int
}

// sgemm tile sizes, as in kernels/gemm.cu, the TF32 kernel's
// (kernels/gemm_tf32_sm80.cu), and the grid's y and z limit.
const (
	gemmTile     = 64
	gemmThread   = 256
	gemmTileTF32 = 128
	maxGridYZ    = 65535
)

// run launches the call, on the TF32 tensor-core kernel when SetTF32 has
// turned it on; called inside do.
func (g gemmCall) run(d *Device) error {
	if g.m == 0 || g.n == 0 || g.batch == 0 {
		return nil
	}
	kernel, tile := "sgemm", gemmTile
	if d.tf32 {
		kernel, tile = "sgemm_tf32", gemmTileTF32
	}
	grid := [3]int{(g.n + tile - 1) / tile, (g.m + tile - 1) / tile, g.batch}
	if grid[1] > maxGridYZ || grid[2] > maxGridYZ {
		return &Error{Call: "cuLaunchKernel", Kernel: kernel, Grid: grid, Block: [3]int{gemmThread, 1, 1},
			Err: fmt.Errorf("grid y and z are limited to %d: m %d, batch %d", maxGridYZ, g.m, g.batch)}
	}
	modA := max(g.modA, 1)
	at := func(b *Buffer, off int) uint64 { return uint64(b.ptr) + uint64(off)*4 }
	return d.launch(kernel, grid, [3]int{gemmThread, 1, 1},
		flag(g.transA), flag(g.transB), i64(g.m), i64(g.n), i64(g.k), f64(float64(g.alpha)),
		at(g.a, g.aOff), i64(g.lda), i64(g.strideA), i64(modA),
		at(g.b, g.bOff), i64(g.ldb), i64(g.strideB), f64(float64(g.beta)),
		at(g.c, g.cOff), i64(g.ldc), i64(g.strideC))
}

// SetTF32 chooses the kernel of every GEMM on the device, and so of MatMul,
// conv2d and the recurrent ops: on, the TF32 tensor-core kernel
// (kernels/gemm_tf32_sm80.cu; compute capability 8.0 or later), off (the
// default), the plain float32 kernel. TF32 rounds the inputs to a 10-bit
// mantissa, so a product may be off by about 2^-10 of Σ|a·b| where float32
// is off by about 2^-24·sqrt(K) of it: enough for training (NVIDIA's and
// PyTorch's allow_tf32), too loose for the float32 goldens, hence opt-in
// as PyTorch's torch.backends.cuda.matmul.allow_tf32 is. It returns
// whether TF32 is now in use: false on GPUs without TF32 tensor cores.
func (d *Device) SetTF32(on bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.fns["sgemm_tf32"]
	d.tf32 = on && ok
	return d.tf32
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C on row-major float32
// buffers, as internal/gemm.Gemm does on the host: op(X) is X or Xᵀ, op(A)
// is m×k, op(B) is k×n, C is m×n, and lda, ldb, ldc are the stored row
// strides. With beta == 0, C is not read.
func (d *Device) Gemm(transA, transB bool, m, n, k int, alpha float32, a *Buffer, lda int, b *Buffer, ldb int, beta float32, c *Buffer, ldc int) error {
	const op = "gemm"
	in := []*Buffer{a, b, c}
	if err := d.checkInputs(op, in...); err != nil {
		return err
	}
	if min(m, n, k) < 0 {
		return opError(op, in, "negative size m %d, n %d, k %d", m, n, k)
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	for _, x := range []struct {
		name       string
		buf        *Buffer
		rows, cols int
		ld         int
	}{{"A", a, ar, ac, lda}, {"B", b, br, bc, ldb}, {"C", c, m, n, ldc}} {
		if x.rows == 0 || x.cols == 0 {
			continue
		}
		if x.ld < x.cols || (x.rows-1)*x.ld+x.cols > x.buf.Size() {
			return opError(op, in, "%s of %d×%d with row stride %d does not fit its buffer of %d elements", x.name, x.rows, x.cols, x.ld, x.buf.Size())
		}
	}
	return d.do(func() error {
		return gemmCall{transA: transA, transB: transB, m: m, n: n, k: k, batch: 1, alpha: alpha, beta: beta,
			a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc}.run(d)
	})
}

// matMul returns op(a)·op(b) as ops.MatMulOp(transA, transB) computes it:
// a and b are 2-D, or batched [..., M, K] with equal leading dims, or a
// batched a with a 2-D b shared by every batch (one batched launch), or
// any other NumPy matmul form: broadcast batch dims, 1-D operands (one
// launch per product, matMulEach).
func (d *Device) matMul(a, b *Buffer, transA, transB bool) (*Buffer, error) {
	dm, err := d.matmulDims(a, b, transA, transB)
	if err != nil {
		return nil, err
	}
	var c *Buffer
	err = d.do(func() error {
		var err error
		if c, err = d.newBuffer(tensor.Float32, dm.out); err != nil {
			return err
		}
		if dm.k == 0 {
			return d.zero(c)
		}
		if dm.aIdx != nil {
			return d.matMulEach(dm, a, b, c, transA, transB)
		}
		return gemmCall{transA: transA, transB: transB, m: dm.m, n: dm.n, k: dm.k, batch: dm.batch, alpha: 1,
			a: a, b: b, c: c, lda: ld(transA, dm.m, dm.k), ldb: ld(transB, dm.k, dm.n), ldc: dm.n,
			strideA: dm.m * dm.k, modA: dm.batch, strideB: dm.bStride, strideC: dm.m * dm.n}.run(d)
	})
	return done(c, err)
}

// matMulGrad returns the gradients of MatMul for the upstream gradient dc,
// for the inputs the need flags ask for (nil for the others):
// dA = dC·op(B)ᵀ and dB = op(A)ᵀ·dC, each stored transposed when its
// operand was, and a shared b's gradient summed over the batch.
func (d *Device) matMulGrad(a, b, dc *Buffer, transA, transB, needA, needB bool) (da, db *Buffer, err error) {
	dm, err := d.matmulDims(a, b, transA, transB)
	if err != nil {
		return nil, nil, err
	}
	if err := d.checkInputs("matmul", dc); err != nil {
		return nil, nil, err
	}
	if !dc.shape.Equal(dm.out) {
		return nil, nil, opError("matmul", []*Buffer{a, b, dc}, "want dc of the product's shape %v", dm.out)
	}
	m, n, k, ta, tb := dm.m, dm.n, dm.k, transA, transB
	err = d.do(func() error {
		var err error
		if dm.aIdx != nil {
			if needA {
				if da, err = d.newBuffer(tensor.Float32, a.shape); err != nil {
					return err
				}
			}
			if needB {
				if db, err = d.newBuffer(tensor.Float32, b.shape); err != nil {
					return err
				}
			}
			return d.matMulGradEach(dm, a, b, dc, da, db, ta, tb)
		}
		if needA {
			if da, err = d.newBuffer(tensor.Float32, a.shape); err != nil {
				return err
			}
			g := gemmCall{m: m, n: k, k: n, batch: dm.batch, alpha: 1, c: da, ldc: k, strideC: m * k, modA: dm.batch}
			if !ta { // dA[m,k] = dC[m,n]·op(B)ᵀ
				g.transB, g.a, g.lda, g.strideA, g.b, g.ldb, g.strideB = !tb, dc, n, m*n, b, ld(tb, k, n), dm.bStride
			} else { // dA stored [k,m] = op(B)·dCᵀ
				g.m, g.n, g.ldc = k, m, m
				g.transA, g.transB = tb, true
				g.a, g.lda, g.strideA, g.b, g.ldb, g.strideB = b, ld(tb, k, n), dm.bStride, dc, n, m*n
			}
			if g.strideA == 0 {
				g.modA = 1
			}
			if err := g.run(d); err != nil {
				return err
			}
		}
		if needB {
			if db, err = d.newBuffer(tensor.Float32, b.shape); err != nil {
				return err
			}
			// A shared b gets one partial gradient per batch entry, summed
			// by channel_sum, so no two blocks add into one element.
			out, shared := db, dm.bStride == 0 && dm.batch > 1
			if shared {
				if out, err = d.newBuffer(tensor.Float32, tensor.Shape{dm.batch, k * n}); err != nil {
					return err
				}
				defer out.Free()
			}
			g := gemmCall{m: k, n: n, k: m, batch: dm.batch, alpha: 1, c: out, ldc: n, strideC: k * n, modA: dm.batch}
			if !tb { // dB[k,n] = op(A)ᵀ·dC
				g.transA, g.a, g.lda, g.strideA, g.b, g.ldb, g.strideB = !ta, a, ld(ta, m, k), m*k, dc, n, m*n
			} else { // dB stored [n,k] = dCᵀ·op(A)
				g.m, g.n, g.ldc = n, k, k
				g.transA, g.transB = true, ta
				g.a, g.lda, g.strideA, g.b, g.ldb, g.strideB = dc, n, m*n, a, ld(ta, m, k), m*k
			}
			if m == 0 {
				return d.zero(db)
			}
			if err := g.run(d); err != nil {
				return err
			}
			if shared {
				return d.colSum(out, dm.batch, k*n, db)
			}
		}
		return nil
	})
	if err != nil {
		freeAll(da, db)
		return nil, nil, err
	}
	return da, db, nil
}

// matmulDims are MatMul's validated sizes.
type matmulDims struct {
	batch, m, n, k int
	bStride        int // elements between the batch entries of b; 0 when shared
	out            tensor.Shape
	// The forms one batched launch cannot run (a 1-D operand, batch dims
	// broadcast): one launch per product, product i reading a's matrix
	// aIdx[i] and b's matrix bIdx[i]; nil for the batched forms.
	aIdx, bIdx []int
}

// matmulDims derives MatMul's sizes from operands ops.Dispatch checked.
func (d *Device) matmulDims(a, b *Buffer, transA, transB bool) (matmulDims, error) {
	const op = "matmul"
	in := []*Buffer{a, b}
	if err := d.checkInputs(op, in...); err != nil {
		return matmulDims{}, err
	}
	// Ranks, batch and inner dims were checked by ops.Dispatch
	// (matmulOp.Check, and linearOp.Check for linear's product). Equal
	// batch dims and a 2-D b shared by a batched a run as one batched
	// launch; the other forms ops.MatMulOp takes (1-D operands, broadcast
	// batch dims) as one launch per product.
	as, bs := a.shape, b.shape
	shared := len(bs) == 2 && len(as) > 2
	if len(as) < 2 || len(bs) < 2 || (!shared && !as[:len(as)-2].Equal(bs[:len(bs)-2])) {
		return broadcastMatmulDims(as, bs, transA, transB)
	}
	m, n, ka := productDims(as, bs, transA, transB)
	dm := matmulDims{batch: as[:len(as)-2].Size(), m: m, n: n, k: ka, bStride: ka * n,
		out: append(as[:len(as)-2].Clone(), m, n)}
	if shared {
		dm.bStride = 0
	}
	return dm, nil
}

// productDims returns m, n and k of op(a)·op(b) for a and b of rank >= 2.
func productDims(as, bs tensor.Shape, transA, transB bool) (m, n, k int) {
	m, k = as[len(as)-2], as[len(as)-1]
	if transA {
		m, k = k, m
	}
	n = bs[len(bs)-1]
	if transB {
		n = bs[len(bs)-2]
	}
	return m, n, k
}

// broadcastMatmulDims is matmulDims for NumPy matmul's other forms: a
// 1-D a promoted to [1, K] and a 1-D b to [K, 1] (their axes dropped from
// the output), batch dims broadcast.
func broadcastMatmulDims(as, bs tensor.Shape, transA, transB bool) (matmulDims, error) {
	va, vb := as, bs
	if len(as) == 1 {
		va = tensor.Shape{1, as[0]}
	}
	if len(bs) == 1 {
		vb = tensor.Shape{bs[0], 1}
	}
	m, n, k := productDims(va, vb, transA, transB)
	ab, bb := va[:len(va)-2], vb[:len(vb)-2]
	batch, err := ops.BroadcastShapes(ab, bb)
	if err != nil {
		return matmulDims{}, fmt.Errorf("matmul of %v and %v: %w", as, bs, err)
	}
	dm := matmulDims{batch: batch.Size(), m: m, n: n, k: k, out: batch.Clone(),
		aIdx: broadcastIndex(ab, batch), bIdx: broadcastIndex(bb, batch)}
	if len(as) > 1 {
		dm.out = append(dm.out, m)
	}
	if len(bs) > 1 {
		dm.out = append(dm.out, n)
	}
	return dm, nil
}

// broadcastIndex returns, for each entry of the broadcast batch shape out
// in row-major order, the index of the entry of batch shape s it reads.
func broadcastIndex(s, out tensor.Shape) []int {
	st := make([]int, len(out)) // s's strides on out's axes, 0 where s has size 1
	for ax, stride := len(s)-1, 1; ax >= 0; ax-- {
		if s[ax] != 1 {
			st[len(out)-len(s)+ax] = stride
		}
		stride *= s[ax]
	}
	idx := make([]int, out.Size())
	for i := range idx {
		for ax, rem := len(out)-1, i; ax >= 0; ax-- {
			idx[i] += rem % out[ax] * st[ax]
			rem /= out[ax]
		}
	}
	return idx
}

// matMulEach runs the products of a broadcast matmul one launch each,
// with alpha 1 and beta 0: c_i = op(a_aIdx[i])·op(b_bIdx[i]).
func (d *Device) matMulEach(dm matmulDims, a, b, c *Buffer, transA, transB bool) error {
	m, n, k := dm.m, dm.n, dm.k
	for i := 0; i < dm.batch; i++ {
		g := gemmCall{transA: transA, transB: transB, m: m, n: n, k: k, batch: 1, alpha: 1,
			a: a, b: b, c: c, aOff: dm.aIdx[i] * m * k, bOff: dm.bIdx[i] * k * n, cOff: i * m * n,
			lda: ld(transA, m, k), ldb: ld(transB, k, n), ldc: n}
		if err := g.run(d); err != nil {
			return err
		}
	}
	return nil
}

// matMulGradEach is matMulGrad for a broadcast matmul: da and db, zeroed
// first, accumulate (beta 1) one launch per product, so a matrix read by
// several products sums their gradients and one no product reads stays 0.
func (d *Device) matMulGradEach(dm matmulDims, a, b, dc, da, db *Buffer, ta, tb bool) error {
	m, n, k := dm.m, dm.n, dm.k
	for _, g := range []*Buffer{da, db} {
		if g != nil {
			if err := d.zero(g); err != nil {
				return err
			}
		}
	}
	for i := 0; i < dm.batch; i++ {
		aOff, bOff, cOff := dm.aIdx[i]*m*k, dm.bIdx[i]*k*n, i*m*n
		if da != nil {
			g := gemmCall{m: m, n: k, k: n, batch: 1, alpha: 1, beta: 1, c: da, cOff: aOff, ldc: k}
			if !ta { // dA[m,k] = dC[m,n]·op(B)ᵀ
				g.transB, g.a, g.aOff, g.lda, g.b, g.bOff, g.ldb = !tb, dc, cOff, n, b, bOff, ld(tb, k, n)
			} else { // dA stored [k,m] = op(B)·dCᵀ
				g.m, g.n, g.ldc, g.transA, g.transB = k, m, m, tb, true
				g.a, g.aOff, g.lda, g.b, g.bOff, g.ldb = b, bOff, ld(tb, k, n), dc, cOff, n
			}
			if err := g.run(d); err != nil {
				return err
			}
		}
		if db != nil && m > 0 {
			g := gemmCall{m: k, n: n, k: m, batch: 1, alpha: 1, beta: 1, c: db, cOff: bOff, ldc: n}
			if !tb { // dB[k,n] = op(A)ᵀ·dC
				g.transA, g.a, g.aOff, g.lda, g.b, g.bOff, g.ldb = !ta, a, aOff, ld(ta, m, k), dc, cOff, n
			} else { // dB stored [n,k] = dCᵀ·op(A)
				g.m, g.n, g.ldc, g.transA, g.transB = n, k, k, true, ta
				g.a, g.aOff, g.lda, g.b, g.bOff, g.ldb = dc, cOff, n, a, aOff, ld(ta, m, k)
			}
			if err := g.run(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// ld returns the stored row length of an operand whose op() is rows×cols.
func ld(trans bool, rows, cols int) int {
	if trans {
		return rows
	}
	return cols
}
