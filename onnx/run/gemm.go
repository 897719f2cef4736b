package run

import (
	"fmt"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Gemm: Y = alpha·op(A)·op(B) + beta·C with op a transpose under
// transA/transB and C broadcast to [M, N]. The common form of a fully
// connected layer (constant B, alpha = beta = 1, C a constant [N] or
// absent) runs as ops.Linear on B laid out [K, N] once at compile time;
// any other form as ops.MatMul, scaled, plus beta·C.
func init() {
	register("Gemm", opDef{compile: compileGemm})
	register("MatMul", opDef{compile: compileMatMul})
}

func compileGemm(c *ctx) (kernel, error) {
	if err := c.arity(2, 3, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("alpha", "beta", "transA", "transB"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2); err != nil {
		return nil, err
	}
	alpha, err := c.n.floatAttr("alpha", 1)
	if err != nil {
		return nil, err
	}
	beta, err := c.n.floatAttr("beta", 1)
	if err != nil {
		return nil, err
	}
	ta, err := c.n.intAttr("transA", 0)
	if err != nil {
		return nil, err
	}
	tb, err := c.n.intAttr("transB", 0)
	if err != nil {
		return nil, err
	}
	a, b := c.in[0], c.in[1]
	for i, in := range []info{a, b} {
		if in.shape != nil && len(in.shape) != 2 {
			return nil, c.n.errorf("input %d %q has shape %s; expected a 2-D matrix", i, c.n.Inputs[i], shapeStr(in.shape))
		}
	}
	c.out[0] = info{elem: a.elem}
	if a.shape != nil && b.shape != nil {
		m, k := a.shape[0], a.shape[1]
		if ta != 0 {
			m, k = k, m
		}
		k2, n := b.shape[0], b.shape[1]
		if tb != 0 {
			k2, n = n, k2
		}
		if k >= 0 && k2 >= 0 && k != k2 {
			return nil, c.n.errorf("op(A) is [%d %d] and op(B) is [%d %d] (transA %d, transB %d); expected equal inner dims", m, k, k2, n, ta, tb)
		}
		c.out[0].shape = []int{m, n}
		if c.has(2) {
			if _, err := broadcastInfer([]int{m, n}, c.in[2].shape); err != nil || (c.in[2].shape != nil && len(c.in[2].shape) > 2) {
				return nil, c.n.errorf("C has shape %s; expected a shape that broadcasts to [%d %d]", shapeStr(c.in[2].shape), m, n)
			}
		}
	}
	w := b.konst
	bias := (*tensor.Tensor)(nil)
	if c.has(2) {
		bias = c.in[2].konst
	}
	if w != nil && alpha == 1 && beta == 1 && ta == 0 && (!c.has(2) || bias != nil && bias.Rank() == 1) {
		if tb != 0 {
			if w, err = ops.Transpose(w, 1, 0); err != nil {
				return nil, c.n.wrap(err)
			}
		}
		if bias != nil && bias.Dim(0) != w.Dim(1) {
			return nil, c.n.errorf("C has shape %v; expected [%d] or a shape that broadcasts to [M %d]", bias.Shape(), w.Dim(1), w.Dim(1))
		}
		c.lowerLinear(w, bias)
		return packedLinear(c, w, bias)
	}
	dt, _ := runtimeDType(a.elem)
	c.lower = lowerGemm(ta != 0, tb != 0, float64(alpha), float64(beta), dt)
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := ops.MatMul(in[0], in[1], ta != 0, tb != 0)
		if err != nil {
			return nil, err
		}
		if alpha != 1 {
			if y, err = scale(y, float64(alpha)); err != nil {
				return nil, err
			}
		}
		if len(in) > 2 && in[2] != nil {
			cc := in[2]
			if beta != 1 {
				if cc, err = scale(cc, float64(beta)); err != nil {
					return nil, err
				}
			}
			if y, err = ops.Add(y, cc); err != nil {
				return nil, err
			}
		}
		return []*tensor.Tensor{y}, nil
	}, nil
}

// lowerLinear sets the plan form of x·w (+ bias) for a constant w [in,
// out]: linear, whose weights the plan packs (and into which it folds a
// batch norm after it).
func (c *ctx) lowerLinear(w, bias *tensor.Tensor) {
	c.lower = func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		args := []infer.Ref{in[0], b.Const(w)}
		if bias != nil {
			args = append(args, b.Const(bias))
		}
		return []infer.Ref{b.Op(ops.LinearOp(), args...)}, nil
	}
}

// lowerGemm is the plan form of Gemm's general form: alpha·op(A)·op(B)
// (+ beta·C), a matmul, scaled by a constant, plus C scaled, in dtype
// dt.
func lowerGemm(ta, tb bool, alpha, beta float64, dt tensor.DType) lowerFn {
	return func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		scalar := func(v float64) (infer.Ref, error) {
			t, err := tensor.Full(dt, v)
			if err != nil {
				return -1, err
			}
			return b.Const(t), nil
		}
		y := b.Op(ops.MatMulOp(ta, tb), in[0], in[1])
		if alpha != 1 {
			s, err := scalar(alpha)
			if err != nil {
				return nil, err
			}
			y = b.Op(ops.BinaryOp("mul"), y, s)
		}
		if len(in) > 2 && in[2] >= 0 {
			cc := in[2]
			if beta != 1 {
				s, err := scalar(beta)
				if err != nil {
					return nil, err
				}
				cc = b.Op(ops.BinaryOp("mul"), cc, s)
			}
			y = b.Op(ops.BinaryOp("add"), y, cc)
		}
		return []infer.Ref{y}, nil
	}
}

// packedLinear is the kernel x·w (+ bias) for a constant w [in, out],
// packed once for the GEMM (ops.PackWeights: its packing is made at the
// first product under a sync.Once, so concurrent Runs share it).
func packedLinear(c *ctx, w, bias *tensor.Tensor) (kernel, error) {
	p, err := ops.PackWeights(w)
	if err != nil {
		return nil, c.n.wrap(err)
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		args := []*tensor.Tensor{in[0], w}
		if bias != nil {
			args = append(args, bias)
		}
		y, err := ops.Run(ops.LinearPackedOp(p), args...)
		return []*tensor.Tensor{y}, err
	}, nil
}

// scale is s·x.
func scale(x *tensor.Tensor, s float64) (*tensor.Tensor, error) {
	f, err := tensor.Full(x.DType(), s)
	if err != nil {
		return nil, err
	}
	return ops.Mul(x, f)
}

// compileMatMul maps ONNX MatMul (numpy.matmul: a 1-D operand is a row
// or column promoted and dropped again; leading batch dims broadcast)
// onto ops.MatMul, whose batched form needs equal batch dims or a 2-D B,
// after broadcasting the batch dims with ops.BroadcastTo when they differ.
func compileMatMul(c *ctx) (kernel, error) {
	if err := c.arity(2, 2, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow(); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1); err != nil {
		return nil, err
	}
	c.out[0] = info{elem: c.in[0].elem}
	if a, b := c.in[0].shape, c.in[1].shape; a != nil && b != nil {
		out, err := matmulShape(a, b)
		if err != nil {
			return nil, c.n.errorf("%v", err)
		}
		c.out[0].shape = out
	}
	// x·W with a constant 2-D W, x of rank 2 or more (a projection): one
	// packed product over every leading dim.
	if w := c.in[1].konst; w != nil && w.Rank() == 2 && w.DType().IsFloat() && c.rank(0) >= 2 {
		c.lowerLinear(w, nil)
		return packedLinear(c, w, nil)
	}
	c.lower = lowerOp(ops.MatMulOp(false, false))
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := matmul(in[0], in[1])
		return []*tensor.Tensor{y}, err
	}, nil
}

// matmulShape is numpy.matmul's output shape, -1 for unknown dims.
func matmulShape(a, b []int) ([]int, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, fmt.Errorf("inputs %s and %s; expected operands of rank 1 or more", shapeStr(a), shapeStr(b))
	}
	pa, pb := a, b
	if len(a) == 1 {
		pa = []int{1, a[0]}
	}
	if len(b) == 1 {
		pb = []int{b[0], 1}
	}
	k, k2 := pa[len(pa)-1], pb[len(pb)-2]
	if k >= 0 && k2 >= 0 && k != k2 {
		return nil, fmt.Errorf("inputs %s and %s have inner dims %d and %d; expected them equal", shapeStr(a), shapeStr(b), k, k2)
	}
	batch, err := broadcastInfer(pa[:len(pa)-2], pb[:len(pb)-2])
	if err != nil {
		return nil, fmt.Errorf("inputs %s and %s have batch dims that do not broadcast (%v)", shapeStr(a), shapeStr(b), err)
	}
	out := batch
	if len(a) > 1 {
		out = append(out, pa[len(pa)-2])
	}
	if len(b) > 1 {
		out = append(out, pb[len(pb)-1])
	}
	return out, nil
}

func matmul(a, b *tensor.Tensor) (*tensor.Tensor, error) {
	as, bs := []int(a.Shape()), []int(b.Shape())
	out, err := matmulShape(as, bs)
	if err != nil {
		return nil, err
	}
	if len(as) == 1 {
		if a, err = a.Reshape(1, as[0]); err != nil {
			return nil, err
		}
	}
	if len(bs) == 1 {
		if b, err = b.Reshape(bs[0], 1); err != nil {
			return nil, err
		}
	}
	ra, rb := a.Rank(), b.Rank()
	if rb > 2 { // a batched a with a 2-D b is ops' own form
		batch, _ := broadcastInfer([]int(a.Shape())[:ra-2], []int(b.Shape())[:rb-2])
		if a, err = broadcastBatch(a, batch); err != nil {
			return nil, err
		}
		if b, err = broadcastBatch(b, batch); err != nil {
			return nil, err
		}
	}
	y, err := ops.MatMul(a, b, false, false)
	if err != nil {
		return nil, err
	}
	return y.Reshape(out...)
}

// broadcastBatch broadcasts x's leading dims to batch, keeping its last two.
func broadcastBatch(x *tensor.Tensor, batch []int) (*tensor.Tensor, error) {
	s := []int(x.Shape())
	want := append(append([]int{}, batch...), s[len(s)-2:]...)
	if tensor.Shape(want).Equal(x.Shape()) {
		return x, nil
	}
	return ops.BroadcastTo(x, want...)
}
