package ops

import (
	"math"
	"sync/atomic"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// flashBr is the block of queries the attention kernels take at a time:
// a multiple of the GEMM micro-kernels' rows (6 on AVX2, 12 and 24 on
// AVX-512), so a block's products have no partial row strip, and small
// enough that the backward pass's two [flashBr, Tk] float32 tiles (390
// KiB at Tk = 1024) stay in a 512 KiB L2.
const flashBr = 48

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

// keepRow returns the mask input's flags for batch element b's keys, or
// nil when there is no mask input.
func (f *flash) keepRow(b int) []bool {
	if f.keep == nil {
		return nil
	}
	return f.keep[b*f.tk : (b+1)*f.tk]
}

// flashForward writes out = softmax(scale·q·kᵀ)·v and each query's
// largest score rowMax and log Σ exp(score - rowMax) logSum (+Inf for a
// query that sees no key), whose sum is the query's log-sum-exp, kept
// apart so that a huge rowMax does not swallow logSum; one task per block
// of flashBr queries of one (batch, head), on all cores. A block meets all
// the keys it may see at once: S = scale·Q_i·Kᵀ with one GEMM into a
// [flashBr, Tk] tile per core (so the memory stays linear in Tk), each
// row is overwritten with exp(S - m) for its maximum m and summed into l,
// O_i = exp(S - m)·V with a second GEMM, and the rows are divided by l at
// the end (FlashAttention-2's deferred division). Against FlashAttention's
// online softmax over key blocks (Algorithm 1) this is one pass over the
// keys with no rescaling of the output, and products long enough to run
// near the micro-kernel's peak; each head's K and V are packed once for
// all its blocks (keyMatrix).
func flashForward[T tensor.Float](f flash, q, k, v, out []T, rowMax, logSum []float64) {
	blocks := (f.tq + flashBr - 1) / flashBr
	bh := f.b * f.heads
	kt, vs := make([]keyMatrix[T], bh), make([]keyMatrix[T], bh)
	left := make([]atomic.Int32, bh) // each head's blocks not yet done
	for h := range bh {
		kt[h] = newKeyMatrix(k[h*f.tk*f.d:], f.tk, f.d, true)
		vs[h] = newKeyMatrix(v[h*f.tk*f.dv:], f.tk, f.dv, false)
		left[h].Store(int32(blocks))
	}
	par.Tasks(bh*blocks, bh*f.tq*f.tk*(f.d+f.dv), func() func(int) {
		s := make([]T, flashBr*tileStride(f.tk))
		m, l := make([]float64, flashBr), make([]float64, flashBr)
		return func(task int) {
			h, i0 := task/blocks, task%blocks*flashBr
			b, br := h/f.heads, min(flashBr, f.tq-i0)
			qi, oi := q[(h*f.tq+i0)*f.d:], out[(h*f.tq+i0)*f.dv:]
			hi := f.limit(b, i0+br-1)
			if ld := tileStride(hi); hi > 0 {
				kt[h].mul(br, hi, T(f.scale), qi, f.d, s, ld)
				keep := f.keepRow(b)
				for r := range br {
					lim := max(0, min(hi, f.limit(b, i0+r)))
					m[r], l[r] = expRow(s[r*ld:r*ld+hi], lim, keep)
				}
				vs[h].mul(br, hi, 1, s, ld, oi, f.dv)
			}
			for r := range br {
				if hi == 0 || l[r] == 0 { // no key seen: the row is zero
					clear(oi[r*f.dv : (r+1)*f.dv])
					rowMax[h*f.tq+i0+r], logSum[h*f.tq+i0+r] = 0, math.Inf(1)
					continue
				}
				vec.Scale(oi[r*f.dv:(r+1)*f.dv], 1/l[r])
				rowMax[h*f.tq+i0+r], logSum[h*f.tq+i0+r] = m[r], math.Log(l[r])
			}
			if left[h].Add(-1) == 0 { // the tasks go head by head: free its packings
				kt[h], vs[h] = keyMatrix[T]{}, keyMatrix[T]{}
			}
		}
	})
}

// tileStride is the row stride of a score tile whose rows hold n keys:
// the least odd multiple of 16 elements (64-byte lines in float32), so
// that the rows of a tile fall in different sets of the L1 cache. At a
// stride of 4 KiB (Tk = 1024 in float32) every row maps to one set, and
// the products that read the tile as A, a block of queries deep, missed
// L1 at every step.
func tileStride(n int) int {
	lines := (n + 15) / 16
	return (lines | 1) * 16
}

// keyMatrix is one head's keys or values, [Tk, w] with row stride w, as
// the B operand of the products that read its first n rows: transposed
// (the keys along C's columns, as in Q·Kᵀ) or not (the keys along the
// inner dimension, as in P·V). It is packed once, at its first product
// that reads all Tk rows, for every such product of the head's query
// blocks; a product that reads fewer rows (a causal or key-length limit)
// multiplies the rows as they lie.
type keyMatrix[T tensor.Float] struct {
	x      []T
	tk, w  int
	trans  bool
	packed *gemm.PackedB[T]
}

func newKeyMatrix[T tensor.Float](x []T, tk, w int, trans bool) keyMatrix[T] {
	k, n := tk, w
	if trans {
		k, n = w, tk
	}
	return keyMatrix[T]{x: x, tk: tk, w: w, trans: trans, packed: gemm.PackB(trans, k, n, x, w)}
}

// mul sets C = alpha·A·op(B) on the calling goroutine, for A with m rows
// (row stride lda) and op(B) the matrix's first n rows, transposed or
// not; C has row stride ldc. The callers already split their work over
// the cores.
func (km *keyMatrix[T]) mul(m, n int, alpha T, a []T, lda int, c []T, ldc int) {
	switch {
	case n == km.tk:
		gemm.SerialPacked(false, m, alpha, a, lda, km.packed, 0, c, ldc)
	case km.trans:
		gemm.Serial(false, true, m, n, km.w, alpha, a, lda, km.x, km.w, 0, c, ldc)
	default:
		gemm.Serial(false, false, m, km.w, n, alpha, a, lda, km.x, km.w, 0, c, ldc)
	}
}

// wideScores reports whether float32 attention over q, k and v could
// overflow float32 in its scores (|scale·q·k| up to scale·d·max|q|·max|k|)
// or in its weighted sums of values (up to Tk·max|v|, before the division
// by the sum of the exponentials): then the float64 kernels run instead.
// The bound is loose by a factor of 2, for the rounding of the partial
// sums; a NaN input does not make it wide.
func wideScores(f flash, q, k, v []float32) bool {
	const limit = math.MaxFloat32 / 2
	mq, mk, mv := maxAbs(q), maxAbs(k), maxAbs(v)
	return math.Abs(f.scale)*float64(f.d)*mq*mk > limit || float64(f.tk)*mv > limit
}

// maxAbs returns the largest |x| of x, in float64 (0 for an empty x; NaN
// when x holds one), with vec.MaxAbs's AVX2 loop.
func maxAbs(x []float32) float64 { return float64(vec.MaxAbs(x)) }

// widen returns x converted to float64.
func widen(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// narrow writes x rounded to float32 into y.
func narrow(y []float32, x []float64) {
	for i, v := range x {
		y[i] = float32(v)
	}
}

// maskRow returns the first lim of one query's scores s, with -Inf where
// keep (when non-nil) hides a key, and zeroes the rest of s. Float64
// scores that overflowed to ±Inf become ±MaxFloat64 first, so that the
// largest share the probability instead of giving Inf − Inf = NaN (float32
// inputs that could overflow run in float64: see wideScores).
func maskRow[T tensor.Float](s []T, lim int, keep []bool) []T {
	clear(s[lim:])
	s = s[:lim]
	if s64, ok := any(s).([]float64); ok {
		for c, x := range s64 {
			if math.IsInf(x, 0) {
				s64[c] = math.Copysign(math.MaxFloat64, x)
			}
		}
	}
	if keep != nil {
		for c := range s {
			if !keep[c] {
				s[c] = T(math.Inf(-1))
			}
		}
	}
	return s
}

// expRow overwrites one query's scores s with exp(s - m) on the first lim
// keys that keep allows (all of them when keep is nil) and 0 elsewhere,
// where m is the largest of those scores, and returns m and the sum of
// the exponentials (sum 0 when the query sees no key).
func expRow[T tensor.Float](s []T, lim int, keep []bool) (m, sum float64) {
	s = maskRow(s, lim, keep)
	m = math.Inf(-1)
	if lim > 0 {
		m = float64(vec.Max(s))
	}
	if math.IsInf(m, -1) { // nothing seen
		clear(s)
		return m, 0
	}
	return m, vec.ExpShiftSum(s, s, m)
}

// flashBackward writes dq and accumulates dk and dv (which the caller
// zeroes) for upstream gradient dout, one task per (batch, head), on all
// cores. As FlashAttention's backward pass (Dao et al. 2022, Algorithm 2)
// it recomputes the probabilities from the saved log-sum-exp instead of
// reading a stored [Tq, Tk] matrix, here for a block of flashBr queries
// against all the keys the block can see (a [flashBr, Tk] tile per core,
// so the memory stays linear in Tk, and the GEMMs are long enough to run
// near peak), with the head's K, Kᵀ and Vᵀ packed once (keyMatrix):
//
//	P = exp(scale·Q_i·Kᵀ - lse_i) on the allowed keys,
//	dV += Pᵀ·dO_i,  dP = dO_i·Vᵀ,  dS = P∘(dP - rowsum(P∘dP)),
//	dQ_i = scale·dS·K,  dK += scale·dSᵀ·Q_i.
//
// rowsum(P∘dP) equals FlashAttention-2's D_i = rowsum(dO_i∘O_i) in exact
// arithmetic; it is taken from the tile itself because then a query that
// sees a single key (P = 1) gets exactly zero, as the reference and
// TensorFlow do, where dO·O would leave float64 round-off.
func flashBackward[T tensor.Float](f flash, q, k, v, dout []T, rowMax, logSum []float64, dq, dk, dv []T) {
	bh := f.b * f.heads
	par.Tasks(bh, bh*f.tq*f.tk*(2*f.d+2*f.dv), func() func(int) {
		p, ds := make([]T, flashBr*tileStride(f.tk)), make([]T, flashBr*tileStride(f.tk))
		return func(h int) {
			b := h / f.heads
			qh, kh, vh, doh := q[h*f.tq*f.d:], k[h*f.tk*f.d:], v[h*f.tk*f.dv:], dout[h*f.tq*f.dv:]
			dqh, dkh, dvh := dq[h*f.tq*f.d:], dk[h*f.tk*f.d:], dv[h*f.tk*f.dv:]
			kt, vt, kn := newKeyMatrix(kh, f.tk, f.d, true), newKeyMatrix(vh, f.tk, f.dv, true), newKeyMatrix(kh, f.tk, f.d, false)
			keep := f.keepRow(b)
			for i0 := 0; i0 < f.tq; i0 += flashBr {
				br := min(flashBr, f.tq-i0)
				hi := f.limit(b, i0+br-1)
				if hi == 0 { // no query of the block sees a key: zero gradients
					clear(dqh[i0*f.d : (i0+br)*f.d])
					continue
				}
				qi, doi, ld := qh[i0*f.d:], doh[i0*f.dv:], tileStride(hi)
				kt.mul(br, hi, T(f.scale), qi, f.d, p, ld)
				for r := range br {
					lim := max(0, min(hi, f.limit(b, i0+r)))
					probRow(p[r*ld:r*ld+hi], lim, keep, rowMax[h*f.tq+i0+r], logSum[h*f.tq+i0+r])
				}
				gemm.Serial(true, false, hi, f.dv, br, 1, p, ld, doi, f.dv, 1, dvh, f.dv)
				vt.mul(br, hi, 1, doi, f.dv, ds, ld)
				for r := range br {
					softmaxRowGrad(p[r*ld:r*ld+hi], ds[r*ld:r*ld+hi])
				}
				kn.mul(br, hi, T(f.scale), ds, ld, dqh[i0*f.d:], f.d)
				gemm.Serial(true, false, hi, f.d, br, T(f.scale), ds, ld, qi, f.d, 1, dkh, f.d)
			}
		}
	})
}

// probRow overwrites the scores s of one query with its probabilities
// exp(s - lse), lse = m + logSum (flashForward's rowMax and logSum), on
// the first lim keys that keep allows (all of them when keep is nil) and 0
// elsewhere. In float32 it takes exp(s - float32(lse)) with the vector
// exponential and multiplies by exp(float32(lse) - lse), which restores
// the bits of lse that float32 drops. Where m is so large that m + logSum
// rounds logSum away, it takes exp((s - m) - logSum), so that tied largest
// scores still share the probability (it sums to 1, not to the ties).
func probRow[T tensor.Float](s []T, lim int, keep []bool, m, logSum float64) {
	if math.IsInf(logSum, 1) { // the query sees no key
		clear(s)
		return
	}
	s = maskRow(s, lim, keep)
	if math.Abs(m) >= 1<<40 {
		for c, x := range s {
			s[c] = T(math.Exp((float64(x) - m) - logSum))
		}
		return
	}
	lse := m + logSum
	if s32, ok := any(s).([]float32); ok {
		shift := float32(lse)
		vec.ExpShiftScale32(s32, s32, shift, float32(math.Exp(float64(shift)-lse)))
		return
	}
	for c, x := range s {
		s[c] = T(math.Exp(float64(x) - lse))
	}
}
