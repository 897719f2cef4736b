package ops

import (
	"math"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// Tile sizes of the flash attention kernels: a block of flashBr queries
// meets a block of flashBc keys. With d = 64 the query, key and value
// blocks and the score tile are 16-32 KiB each in float32, so one block
// pair's operands stay in L2 (1 MiB per core here) while its GEMMs run.
const (
	flashBr = 64
	flashBc = 64
)

// flash is one dot-product attention's sizes, scale and mask, read by the
// tiled kernels.
type flash struct {
	attnDims
	scale   float64
	lengths []int  // keys per batch element (tk without KeyLengths)
	causal  bool   // query i sees keys j <= i
	keep    []bool // [B·Tk]: the mask input's non-zero keys, or nil
}

func newFlash(d attnDims, m attnMask, scale float64) flash {
	f := flash{attnDims: d, scale: scale, causal: m.a.Causal, lengths: m.a.KeyLengths}
	if f.lengths == nil {
		f.lengths = make([]int, d.b)
		for i := range f.lengths {
			f.lengths[i] = d.tk
		}
	}
	if m.mask != nil {
		f.keep = make([]bool, d.b*d.tk)
		for i := range f.keep {
			f.keep[i] = m.mask.At(i) != 0
		}
	}
	return f
}

// limit is how many leading keys query i of batch element b may see
// before the mask input: its key length, and i+1 when causal. It does not
// decrease with i, so a block's last query has the block's largest limit.
func (f *flash) limit(b, i int) int {
	if f.causal {
		return min(f.lengths[b], i+1)
	}
	return f.lengths[b]
}

// keepRow returns the mask input's flags for batch element b from key j0,
// or nil when there is no mask input.
func (f *flash) keepRow(b, j0 int) []bool {
	if f.keep == nil {
		return nil
	}
	return f.keep[b*f.tk+j0 : (b+1)*f.tk]
}

// flashForward writes out = softmax(scale·q·kᵀ)·v and each query's
// log-sum-exp lse (+Inf for a query that sees no key), one task per block
// of flashBr queries of one (batch, head), on all cores. Per key block it
// takes the scores S = scale·Q_i·K_jᵀ with one GEMM, updates each row's
// running maximum m and sum l of exp(S - m) (rescaling the row's output
// by exp(m_old - m_new) when m grows), and adds exp(S - m)·V_j to the
// output with a second GEMM; the rows are divided by l at the end
// (FlashAttention, Algorithm 1, in FlashAttention-2's order: the division
// is deferred to the end).
func flashForward[T tensor.Float](f flash, q, k, v, out []T, lse []float64) {
	blocks := (f.tq + flashBr - 1) / flashBr
	bh := f.b * f.heads
	par.Tasks(bh*blocks, bh*f.tq*f.tk*(f.d+f.dv), func() func(int) {
		s := make([]T, flashBr*flashBc)
		m, l := make([]float64, flashBr), make([]float64, flashBr)
		return func(task int) {
			h, i0 := task/blocks, task%blocks*flashBr
			b, br := h/f.heads, min(flashBr, f.tq-i0)
			qi, oi := q[(h*f.tq+i0)*f.d:], out[(h*f.tq+i0)*f.dv:]
			kh, vh := k[h*f.tk*f.d:], v[h*f.tk*f.dv:]
			for r := range br {
				m[r], l[r] = math.Inf(-1), 0
			}
			hi := f.limit(b, i0+br-1)
			for j0 := 0; j0 < hi; j0 += flashBc {
				bc := min(flashBc, hi-j0)
				gemm.Gemm(false, true, br, bc, f.d, T(f.scale), qi, f.d, kh[j0*f.d:], f.d, 0, s, bc)
				keep := f.keepRow(b, j0)
				for r := range br {
					row := s[r*bc : (r+1)*bc]
					lim := max(0, min(bc, f.limit(b, i0+r)-j0))
					if alpha := onlineSoftmaxRow(row, lim, keep, &m[r], &l[r]); alpha != 1 {
						scaleRow(oi[r*f.dv:(r+1)*f.dv], alpha)
					}
				}
				gemm.Gemm(false, false, br, f.dv, bc, 1, s, bc, vh[j0*f.dv:], f.dv, 1, oi, f.dv)
			}
			for r := range br {
				if l[r] == 0 { // no key seen: the row stayed zero
					lse[h*f.tq+i0+r] = math.Inf(1)
					continue
				}
				scaleRow(oi[r*f.dv:(r+1)*f.dv], 1/l[r])
				lse[h*f.tq+i0+r] = m[r] + math.Log(l[r])
			}
		}
	})
}

// onlineSoftmaxRow is one step of the online softmax (Milakov and
// Gimelshein 2018) on one row of scores s, of which the first lim keys
// may be seen (and of those, only the ones keep allows when keep is
// non-nil): it raises the running maximum *m to cover them, overwrites s
// with exp(s - m) there and 0 elsewhere, sets the running sum *l to
// l·exp(m_old - m) + Σ exp(s - m), and returns exp(m_old - m), the factor
// by which the row's output so far must be rescaled.
func onlineSoftmaxRow[T tensor.Float](s []T, lim int, keep []bool, m, l *float64) float64 {
	clear(s[lim:])
	s = s[:lim]
	if keep != nil {
		for c := range s {
			if !keep[c] {
				s[c] = T(math.Inf(-1))
			}
		}
	}
	mt := math.Inf(-1)
	if lim > 0 {
		mt = float64(vec.Max(s))
	}
	if math.IsInf(mt, -1) { // nothing seen in this block
		clear(s)
		return 1
	}
	mNew := max(*m, mt)
	sum := expShift(s, mNew)
	alpha := math.Exp(*m - mNew)
	*m, *l = mNew, *l*alpha+sum
	return alpha
}

// flashBackward writes dq and accumulates dk and dv (zeroed by the
// caller) for upstream gradient dout, one task per (batch, head), on all
// cores. As FlashAttention's backward pass (Dao et al. 2022, Algorithm 2)
// it recomputes the probabilities from the saved log-sum-exp instead of
// reading a stored [Tq, Tk] matrix, here for a block of flashBr queries
// against all the keys the block can see (a [flashBr, Tk] tile per core,
// so the memory stays linear in Tk, and the GEMMs are long enough to run
// near peak):
//
//	P = exp(scale·Q_i·Kᵀ - lse_i) on the allowed keys,
//	dV += Pᵀ·dO_i,  dP = dO_i·Vᵀ,  dS = P∘(dP - rowsum(P∘dP)),
//	dQ_i = scale·dS·K,  dK += scale·dSᵀ·Q_i.
//
// rowsum(P∘dP) equals FlashAttention-2's D_i = rowsum(dO_i∘O_i) in exact
// arithmetic; it is taken from the tile itself because then a query that
// sees a single key (P = 1) gets exactly zero, as the reference and
// TensorFlow do, where dO·O would leave float64 round-off.
func flashBackward[T tensor.Float](f flash, q, k, v, dout []T, lse []float64, dq, dk, dv []T) {
	bh := f.b * f.heads
	par.Tasks(bh, bh*f.tq*f.tk*(2*f.d+2*f.dv), func() func(int) {
		p, ds := make([]T, flashBr*f.tk), make([]T, flashBr*f.tk)
		return func(h int) {
			b := h / f.heads
			qh, kh, vh, doh := q[h*f.tq*f.d:], k[h*f.tk*f.d:], v[h*f.tk*f.dv:], dout[h*f.tq*f.dv:]
			dqh, dkh, dvh := dq[h*f.tq*f.d:], dk[h*f.tk*f.d:], dv[h*f.tk*f.dv:]
			keep := f.keepRow(b, 0)
			for i0 := 0; i0 < f.tq; i0 += flashBr {
				br := min(flashBr, f.tq-i0)
				hi := f.limit(b, i0+br-1)
				if hi == 0 { // no query of the block sees a key: zero gradients
					continue
				}
				qi, doi := qh[i0*f.d:], doh[i0*f.dv:]
				gemm.Gemm(false, true, br, hi, f.d, T(f.scale), qi, f.d, kh, f.d, 0, p, hi)
				for r := range br {
					lim := max(0, min(hi, f.limit(b, i0+r)))
					probRow(p[r*hi:(r+1)*hi], lim, keep, lse[h*f.tq+i0+r])
				}
				gemm.Gemm(true, false, hi, f.dv, br, 1, p, hi, doi, f.dv, 1, dvh, f.dv)
				gemm.Gemm(false, true, br, hi, f.dv, 1, doi, f.dv, vh, f.dv, 0, ds, hi)
				for r := range br {
					softmaxRowGrad(p[r*hi:(r+1)*hi], ds[r*hi:(r+1)*hi])
				}
				gemm.Gemm(false, false, br, f.d, hi, T(f.scale), ds, hi, kh, f.d, 0, dqh[i0*f.d:], f.d)
				gemm.Gemm(true, false, hi, f.d, br, T(f.scale), ds, hi, qi, f.d, 1, dkh, f.d)
			}
		}
	})
}

// probRow overwrites the scores s of one query with its probabilities
// exp(s - lse) on the first lim keys that keep allows (all of them when
// keep is nil) and 0 elsewhere. In float32 it takes exp(s - float32(lse))
// with the vector exponential and multiplies by exp(float32(lse) - lse),
// which restores the bits of lse that float32 drops.
func probRow[T tensor.Float](s []T, lim int, keep []bool, lse float64) {
	clear(s[lim:])
	s = s[:lim]
	if math.IsInf(lse, 1) { // the query sees no key
		clear(s)
		return
	}
	if keep != nil {
		for c := range s {
			if !keep[c] {
				s[c] = T(math.Inf(-1))
			}
		}
	}
	if s32, ok := any(s).([]float32); ok {
		shift := float32(lse)
		expShift32(s32, s32, shift)
		scaleRow(s32, math.Exp(float64(shift)-lse))
		return
	}
	for c, x := range s {
		s[c] = T(math.Exp(float64(x) - lse))
	}
}
