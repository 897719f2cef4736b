package ops

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

// refAttention is the plain (quadratic-memory) dot-product attention that
// the flash kernels replaced, kept as their reference: per (batch, head) it
// forms P = masked softmax(scale·Q·Kᵀ) [Tq, Tk] and out = P·V, and its
// backward takes dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P∘(dP - rowsum(dP∘P)),
// dQ = scale·dS·K, dK = scale·dSᵀ·Q.
func refAttention[T tensor.Float](d attnDims, m attnMask, scale float64, q, k, v, dout, out, dq, dk, dv []T) {
	p := make([]T, d.b*d.heads*d.tq*d.tk)
	ds := make([]T, d.tq*d.tk)
	for bh := 0; bh < d.b*d.heads; bh++ {
		b := bh / d.heads
		pb := p[bh*d.tq*d.tk : (bh+1)*d.tq*d.tk]
		gemm.Gemm(false, true, d.tq, d.tk, d.d, T(scale), q[bh*d.tq*d.d:], d.d, k[bh*d.tk*d.d:], d.d, 0, pb, d.tk)
		for i := 0; i < d.tq; i++ {
			maskedSoftmax(pb[i*d.tk:(i+1)*d.tk], func(j int) bool { return m.allowed(b, i, j) })
		}
		gemm.Gemm(false, false, d.tq, d.dv, d.tk, 1, pb, d.tk, v[bh*d.tk*d.dv:], d.dv, 0, out[bh*d.tq*d.dv:], d.dv)
		if dout == nil {
			continue
		}
		do := dout[bh*d.tq*d.dv:]
		gemm.Gemm(true, false, d.tk, d.dv, d.tq, 1, pb, d.tk, do, d.dv, 0, dv[bh*d.tk*d.dv:], d.dv)
		gemm.Gemm(false, true, d.tq, d.tk, d.dv, 1, do, d.dv, v[bh*d.tk*d.dv:], d.dv, 0, ds, d.tk)
		for i := 0; i < d.tq; i++ {
			softmaxRowGrad(pb[i*d.tk:(i+1)*d.tk], ds[i*d.tk:(i+1)*d.tk])
		}
		gemm.Gemm(false, false, d.tq, d.d, d.tk, T(scale), ds, d.tk, k[bh*d.tk*d.d:], d.d, 0, dq[bh*d.tq*d.d:], d.d)
		gemm.Gemm(true, false, d.tk, d.d, d.tq, T(scale), ds, d.tk, q[bh*d.tq*d.d:], d.d, 0, dk[bh*d.tk*d.d:], d.d)
	}
}

// refAttentionRun runs refAttention on tensors: the output and, when gout
// is non-nil, the gradients of q, k and v.
func refAttentionRun(t testing.TB, a AttentionAttrs, in []*tensor.Tensor, gout *tensor.Tensor) (*tensor.Tensor, []*tensor.Tensor) {
	o := &attentionOp{a: a}
	d, m, err := o.dims(in)
	require.NoError(t, err)
	out := tensor.Zeros(in[0].DType(), append(in[0].Shape()[:in[0].Rank()-1].Clone(), d.dv)...)
	g := []*tensor.Tensor{tensor.ZerosLike(in[0]), tensor.ZerosLike(in[1]), tensor.ZerosLike(in[2])}
	switch in[0].DType() {
	case tensor.Float32:
		refAttention(d, m, o.scale(d), in[0].Float32s(), in[1].Float32s(), in[2].Float32s(), floats[float32](gout),
			out.Float32s(), g[0].Float32s(), g[1].Float32s(), g[2].Float32s())
	case tensor.Float64:
		refAttention(d, m, o.scale(d), in[0].Float64s(), in[1].Float64s(), in[2].Float64s(), floats[float64](gout),
			out.Float64s(), g[0].Float64s(), g[1].Float64s(), g[2].Float64s())
	}
	return out, g
}

// TestFlashAttentionMatchesReference runs the flash kernels against the
// plain kernel on odd sizes (one key block and many, ragged last blocks)
// with every mask, in float64 and float32.
func TestFlashAttentionMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name                string
		b, h, tq, tk, d, dv int
		lengths             bool
		causal, mask        bool
	}{
		{"one", 1, 1, 1, 1, 1, 1, false, false, false},
		{"small", 2, 3, 3, 17, 3, 1, true, false, false},
		{"causal_square", 1, 2, 127, 127, 17, 3, false, true, false},
		{"causal_longer_keys", 2, 1, 17, 127, 3, 17, true, true, false},
		{"mask_input", 3, 1, 127, 17, 1, 3, false, false, true},
		{"long", 1, 1, 513, 513, 3, 3, true, true, true},
		{"long_queries", 1, 2, 513, 3, 17, 1, false, false, false},
		{"no_keys", 2, 1, 70, 2, 3, 2, true, false, false},       // the second batch element sees no key
		{"many_keys", 1, 2, 70, 3100, 5, 3, false, false, false}, // K and V packed in several blocks
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed := uint64(tc.tq*1000 + tc.tk)
			q, k, v := randn(seed, tc.b, tc.h, tc.tq, tc.d), randn(seed+1, tc.b, tc.h, tc.tk, tc.d), randn(seed+2, tc.b, tc.h, tc.tk, tc.dv)
			gout := randn(seed+3, tc.b, tc.h, tc.tq, tc.dv)
			var a AttentionAttrs
			a.Causal = tc.causal
			if tc.lengths { // batch element i sees tk - 2i keys, at least 0
				for i := range tc.b {
					a.KeyLengths = append(a.KeyLengths, max(0, tc.tk-2*i))
				}
			}
			in := ins(q, k, v)
			if tc.mask { // every third key masked
				mask := tensor.Zeros(tensor.Float64, tc.b, tc.tk)
				for i := range mask.Size() {
					if i%3 != 1 {
						mask.SetAt(i, 1)
					}
				}
				in = append(in, mask)
			}
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
				x := in
				atol, rtol := 1e-13, 1e-11
				if dt == tensor.Float32 {
					x = make([]*tensor.Tensor, len(in))
					for i := range in {
						x[i] = f32(in[i])
					}
					atol, rtol = 2e-6, 1e-4
				}
				g := gout
				if dt == tensor.Float32 {
					g = f32(gout)
				}
				// The output and dq are taken uninitialised: NaN left in
				// the pool shows any row the kernels do not write.
				poisonPool(t, dt, append(x[0].Shape()[:x[0].Rank()-1].Clone(), tc.dv), x[0].Shape())
				op := AttentionOp(a)
				out, err := op.Forward(x)
				require.NoError(t, err)
				grads, err := op.Backward(x, out, g, []bool{true, true, true, false})
				require.NoError(t, err)
				wantOut, wantGrads := refAttentionRun(t, a, x, g)
				requireClose(t, wantOut, out, atol, rtol)
				for i, w := range wantGrads {
					requireClose(t, w, grads[i], atol, rtol)
				}
			}
		})
	}
}

// attentionBenchInputs returns the benchmark's shape: 8 batch elements, 8 heads,
// d = dv = 64, self-attention of length tq.
func attentionBenchInputs(tq int) (q, k, v, g *tensor.Tensor) {
	return f32(randn(1, 8, 8, tq, 64)), f32(randn(2, 8, 8, tq, 64)), f32(randn(3, 8, 8, tq, 64)), f32(randn(4, 8, 8, tq, 64))
}

// BenchmarkAttention times a forward and backward pass of the flash
// kernels and of the plain reference (which keeps [B, H, T, T]
// probabilities) in one run; B/op shows the flash kernels' memory growing
// linearly in T and the reference's quadratically, and cpu-ns/op the CPU
// time of all cores together.
func BenchmarkAttention(b *testing.B) {
	for _, tq := range []int{256, 1024} {
		q, k, v, g := attentionBenchInputs(tq)
		in := ins(q, k, v)
		b.Run(fmt.Sprintf("flash/T%d", tq), func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			b.ResetTimer()
			for range b.N {
				op := AttentionOp(AttentionAttrs{})
				out, err := op.Forward(in)
				require.NoError(b, err)
				_, err = op.Backward(in, out, g, []bool{true, true, true})
				require.NoError(b, err)
			}
			reportCPU(b, cpu)
		})
		b.Run(fmt.Sprintf("reference/T%d", tq), func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			b.ResetTimer()
			for range b.N {
				refAttentionRun(b, AttentionAttrs{}, in, g)
			}
			reportCPU(b, cpu)
		})
	}
}
