//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// tolAttention is the fused attention's tolerance against ops' attention:
// the scores are float32 dot products over d in another order (tolGEMM),
// exponentiated in float32 against a running maximum rather than the
// row's, and the outputs and gradients are float32 sums over up to Tk (or
// Tq) terms accumulated tile by tile, where the CPU op normalises the
// probabilities first and multiplies them by v with its GEMM.
var tolAttention = tol{rtol: 1e-4, atol: 1e-4}

func TestAttention(t *testing.T) {
	rng := tensor.NewRNG(31)
	for ci, c := range []struct {
		q, k, v []int
		lens    []int
		mask    bool
		causal  bool
		scale   float64
	}{
		{q: []int{2, 3, 17, 16}, k: []int{2, 3, 33, 16}, v: []int{2, 3, 33, 24}},
		{q: []int{2, 3, 17, 16}, k: []int{2, 3, 33, 16}, v: []int{2, 3, 33, 24}, causal: true, lens: []int{5, 0}},
		{q: []int{3, 1, 5}, k: []int{3, 1, 5}, v: []int{3, 1, 3}, mask: true},
		{q: []int{1, 2, 127, 64}, k: []int{1, 2, 127, 64}, v: []int{1, 2, 127, 64}, causal: true},
		{q: []int{2, 1, 65, 64}, k: []int{2, 1, 513, 64}, v: []int{2, 1, 513, 64}, lens: []int{513, 300}, mask: true},
		{q: []int{2, 2, 33, 128}, k: []int{2, 2, 70, 128}, v: []int{2, 2, 70, 96}, causal: true, mask: true},
		{q: []int{1, 3, 17, 100}, k: []int{1, 3, 1, 100}, v: []int{1, 3, 1, 65}, scale: 0.3},
		{q: []int{2, 4, 7}, k: []int{2, 0, 7}, v: []int{2, 0, 5}},
		{q: []int{1, 0, 8}, k: []int{1, 3, 8}, v: []int{1, 3, 8}, causal: true},
	} {
		t.Run(fmt.Sprint(ci, c.q, c.k, c.v, c.lens, c.mask, c.causal), func(t *testing.T) {
			q, k, v := randn(t, rng, c.q...), randn(t, rng, c.k...), randn(t, rng, c.v...)
			attrs := ops.AttentionAttrs{KeyLengths: c.lens, Causal: c.causal, Scale: c.scale}
			in := []*tensor.Tensor{q, k, v}
			var mb *Buffer
			if c.mask {
				tk := c.k[len(c.k)-2]
				m := tensor.Zeros(tensor.Float32, c.q[0], tk)
				for i := range m.Float32s() {
					if rng.IntN(4) > 0 {
						m.Float32s()[i] = 1
					}
				}
				in, mb = append(in, m), up(t, m)
			}
			op := ops.AttentionOp(attrs)
			out, err := op.Forward(in)
			require.NoError(t, err)
			gout := randn(t, rng, out.Shape()...)
			need := make([]bool, len(in))
			need[0], need[1], need[2] = true, true, true
			grads, err := op.Backward(in, out, gout, need)
			require.NoError(t, err)

			o := dev.attentionOp(attrs)
			defer o.Free()
			y, err := o.Forward(up(t, q), up(t, k), up(t, v), mb)
			require.NoError(t, err)
			defer y.Free()
			requireClose(t, out, y, tolAttention, "forward")
			dq, dk, dv, err := o.Backward(up(t, gout))
			require.NoError(t, err)
			defer freeAll(dq, dk, dv)
			requireClose(t, grads[0], dq, tolAttention, "dq")
			requireClose(t, grads[1], dk, tolAttention, "dk")
			requireClose(t, grads[2], dv, tolAttention, "dv")
		})
	}
}

// Bad shapes, head dims past 128 and bad key lengths are errors that name
// the op and the shapes: the shapes from ops.Dispatch's check
// (attentionOp.Check), the head dims from the kernel.
func TestAttentionErrors(t *testing.T) {
	rng := tensor.NewRNG(32)
	qt := onDevice(t, randn(t, rng, 2, 5, 8))
	td := func(x *tensor.Tensor) *tensor.Tensor { return onDevice(t, x) }
	for _, c := range []struct {
		name    string
		k, v    *tensor.Tensor
		mask    *tensor.Tensor
		attrs   ops.AttentionAttrs
		message string
	}{
		{"inner dims", td(randn(t, rng, 2, 4, 7)), td(randn(t, rng, 2, 4, 3)), nil, ops.AttentionAttrs{}, "want q [B, H, Tq, d]"},
		{"head dim", td(randn(t, rng, 2, 4, 8)), td(randn(t, rng, 2, 4, 129)), nil, ops.AttentionAttrs{}, "up to 128"},
		{"key lengths", td(randn(t, rng, 2, 4, 8)), td(randn(t, rng, 2, 4, 3)), nil, ops.AttentionAttrs{KeyLengths: []int{1, 5}}, "outside [0, 4]"},
		{"mask", td(randn(t, rng, 2, 4, 8)), td(randn(t, rng, 2, 4, 3)), td(randn(t, rng, 2, 5)), ops.AttentionAttrs{}, "want mask [2 4]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := []*tensor.Tensor{qt, c.k, c.v}
			if c.mask != nil {
				in = append(in, c.mask)
			}
			_, err := ops.Run(ops.AttentionOp(c.attrs), in...)
			var oe *ops.Error
			require.ErrorAs(t, err, &oe)
			require.ErrorContains(t, err, c.message)
		})
	}
}

// BenchmarkAttention is the fused attention at the shape, batch 8,
// 8 heads, 1024 queries and keys, head dim 64, no mask: forward alone and
// forward plus backward. The GFLOP/s count 4·B·H·Tq·Tk·d for the forward
// pass (q·kᵀ and p·v) and 2.5 times that for the backward pass, the
// FlashAttention papers' convention (the kernels recompute more).
func BenchmarkAttention(b *testing.B) {
	const batch, heads, t, d = 8, 8, 1024, 64
	q, k, v := upB(b, batch, heads, t, d), upB(b, batch, heads, t, d), upB(b, batch, heads, t, d)
	gout := upB(b, batch, heads, t, d)
	fwd := 4 * float64(batch*heads*t*t*d)
	for _, backward := range []bool{false, true} {
		name, flops := "forward", fwd
		if backward {
			name, flops = "forward_backward", 3.5*fwd
		}
		b.Run(name, func(b *testing.B) {
			o := dev.attentionOp(ops.AttentionAttrs{})
			b.Cleanup(o.Free)
			for b.Loop() {
				y, err := o.Forward(q, k, v, nil)
				if err != nil {
					b.Fatal(err)
				}
				if backward {
					dq, dk, dv, err := o.Backward(gout)
					if err != nil {
						b.Fatal(err)
					}
					freeAll(dq, dk, dv)
				}
				y.Free()
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
