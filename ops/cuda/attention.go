//go:build cuda

package cuda

import (
	"math"
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// maxHeadDim is the largest head dim (d and dv) the attention kernels take.
const maxHeadDim = 128

// attnOp is one application of ops.AttentionOp on the device: scaled
// dot-product attention softmax(scale·q·kᵀ over the allowed keys)·v for
// q [B, H, Tq, d], k [B, H, Tk, d], v [B, H, Tk, dv] (or without the heads
// axis), with ops.AttentionAttrs' key lengths, causal mask and scale, and
// an optional float mask [B, Tk] (a key j is attended where it is not 0).
// Heads are independent, so one kernel serves every (batch, head); d and
// dv may be at most 128.
//
// The kernels are fused flash-style (FlashAttention-2, Dao 2023;
// kernels/attention.cu): Forward never forms the [Tq, Tk] probabilities,
// keeping only each query's log-sum-exp, and Backward recomputes them tile
// by tile, so memory stays linear in the sequence lengths. A query that
// may attend no key outputs zeros and passes no gradient, as ops' does.
// Forward keeps references to its inputs and its output, which must stay
// unchanged until Backward.
type attnOp struct {
	d     *Device
	attrs ops.AttentionAttrs

	// Saved by Forward.
	bh, heads, tq, tk, dk, dv int
	scale                     float64
	q, k, v, mask, out        *Buffer
	lse, klen                 *Buffer
}

// attentionOp returns the op of ops.AttentionOp(attrs) on the device.
func (d *Device) attentionOp(attrs ops.AttentionAttrs) *attnOp {
	attrs.KeyLengths = slices.Clone(attrs.KeyLengths)
	return &attnOp{d: d, attrs: attrs}
}

// check validates the inputs as ops' attention does and saves the sizes.
func (o *attnOp) check(q, k, v, mask *Buffer) error {
	const op = "attention"
	in := []*Buffer{q, k, v}
	if mask != nil {
		in = append(in, mask)
	}
	if err := o.d.checkInputs(op, in...); err != nil {
		return err
	}
	// Shapes, the mask and the key lengths were checked by ops.Dispatch
	// (attentionOp.Check); the head dims are the kernel's own limit.
	qs, ks, vs := q.shape, k.shape, v.shape
	r := len(qs)
	b, heads := qs[0], 1
	if r == 4 {
		heads = qs[1]
	}
	o.bh, o.heads, o.tq, o.tk, o.dk, o.dv = b*heads, heads, qs[r-2], ks[r-2], qs[r-1], vs[r-1]
	if o.dk > maxHeadDim || o.dv > maxHeadDim {
		return opError(op, in, "the CUDA kernel takes head dims d and dv up to %d, got %d and %d", maxHeadDim, o.dk, o.dv)
	}
	o.scale = o.attrs.Scale
	if o.scale == 0 {
		o.scale = 1 / math.Sqrt(float64(max(o.dk, 1)))
	}
	return nil
}

// tile returns the kernels' suffix and their rows per block for the head
// dims (kernels/attention.cu).
func (o *attnOp) tile() (string, int) {
	if max(o.dk, o.dv) <= 64 {
		return "64", 32
	}
	return "128", 16
}

// grid is the launch grid of a kernel with a block per (batch·head, tile
// of n rows).
func (o *attnOp) grid(n, tile int) [3]int { return [3]int{o.bh * ((n + tile - 1) / tile), 1, 1} }

// Forward returns the attention of q, k, v; mask may be nil.
func (o *attnOp) Forward(q, k, v, mask *Buffer) (*Buffer, error) {
	o.Free()
	if err := o.check(q, k, v, mask); err != nil {
		return nil, err
	}
	o.q, o.k, o.v, o.mask = q, k, v, mask
	d := o.d
	suffix, tile := o.tile()
	var out *Buffer
	err := d.do(func() error {
		var err error
		if out, err = d.newBuffer(tensor.Float32, slices.Concat(q.shape[:len(q.shape)-1], tensor.Shape{o.dv})); err != nil {
			return err
		}
		if o.lse, err = d.newBuffer(tensor.Float32, tensor.Shape{o.bh, o.tq}); err != nil {
			return err
		}
		if kl := o.attrs.KeyLengths; kl != nil {
			lens := make([]int64, len(kl))
			for i, l := range kl {
				lens[i] = int64(l)
			}
			if o.klen, err = d.newBuffer(tensor.Int64, tensor.Shape{len(lens)}); err != nil {
				return err
			}
			if err := d.copyHtoD(o.klen, tensor.MustFromSlice(lens)); err != nil {
				return err
			}
		}
		if o.bh*o.tq == 0 {
			return nil
		}
		return d.launch("attn_fwd_"+suffix, o.grid(o.tq, tile), [3]int{4 * tile, 1, 1}, ptr(q), ptr(k), ptr(v),
			ptr(out), ptr(o.lse), ptr(o.klen), ptr(mask), flag(o.attrs.Causal), i64(o.heads), i64(o.tq), i64(o.tk),
			i64(o.dk), i64(o.dv), f64(o.scale))
	})
	if err != nil {
		o.Free()
		return done(out, err)
	}
	o.out = out
	return out, nil
}

// Backward returns the gradients of q, k and v for the upstream gradient
// gout of Forward's output shape: D = rowsum(gout∘out), then dK and dV in
// a kernel parallel over key tiles and dQ in one parallel over query
// tiles, both recomputing the probabilities from the saved log-sum-exp.
func (o *attnOp) Backward(gout *Buffer) (dq, dk, dv *Buffer, err error) {
	const op = "attention"
	in := []*Buffer{o.q, o.k, o.v, o.out, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, nil, nil, err
	}
	d := o.d
	suffix, tile := o.tile()
	block := [3]int{4 * tile, 1, 1}
	err = d.do(func() error {
		var err error
		if dq, err = d.newBuffer(tensor.Float32, o.q.shape); err != nil {
			return err
		}
		if dk, err = d.newBuffer(tensor.Float32, o.k.shape); err != nil {
			return err
		}
		if dv, err = d.newBuffer(tensor.Float32, o.v.shape); err != nil {
			return err
		}
		dsum, err := d.newBuffer(tensor.Float32, tensor.Shape{o.bh, o.tq})
		if err != nil {
			return err
		}
		defer dsum.Free()
		rows := o.bh * o.tq
		if rows > 0 {
			if err := d.launch("attn_bwd_dot", grid1(rows*32), block1, ptr(gout), ptr(o.out), ptr(dsum), i64(rows), i64(o.dv)); err != nil {
				return err
			}
		}
		common := []uint64{ptr(o.klen), ptr(o.mask), flag(o.attrs.Causal), i64(o.heads), i64(o.tq), i64(o.tk),
			i64(o.dk), i64(o.dv), f64(o.scale)}
		if o.bh*o.tk > 0 {
			args := append([]uint64{ptr(o.q), ptr(o.k), ptr(o.v), ptr(gout), ptr(o.lse), ptr(dsum), ptr(dk), ptr(dv)}, common...)
			if err := d.launch("attn_bwd_dkdv_"+suffix, o.grid(o.tk, tile), block, args...); err != nil {
				return err
			}
		}
		if rows > 0 {
			args := append([]uint64{ptr(o.q), ptr(o.k), ptr(o.v), ptr(gout), ptr(o.lse), ptr(dsum), ptr(dq)}, common...)
			return d.launch("attn_bwd_dq_"+suffix, o.grid(o.tq, tile), block, args...)
		}
		return nil
	})
	if err != nil {
		freeAll(dq, dk, dv)
		return nil, nil, nil, err
	}
	return dq, dk, dv, nil
}

// Free releases what Forward saved on the device (the log-sum-exp and the
// key lengths); the inputs and the output stay the caller's.
func (o *attnOp) Free() {
	freeAll(o.lse, o.klen)
	o.lse, o.klen = nil, nil
	o.q, o.k, o.v, o.mask, o.out = nil, nil, nil, nil, nil
}
