package ops

import (
	"math"
	"slices"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "attention", Inputs: []string{"q", "k", "v", "mask"}, Grads: []int{0, 1, 2},
		Make: MakeOp(AttentionOp), CUDA: DeviceKernel})
	register(Spec{Name: "additive_attention", Inputs: []string{"q", "k", "v", "values", "mask"}, Grads: []int{0, 1, 2, 3},
		Make: MakeOp(AdditiveAttentionOp), CUDA: DeviceFallback})
}

// AttentionAttrs are the masking (and scaling) attributes of the attention
// ops. A key j is attended by query i of batch element b when all of these
// allow it:
//   - KeyLengths (optional, one per batch element): j < KeyLengths[b], a
//     key-padding mask for padded keys;
//   - the optional mask input [B, Tk]: mask[b, j] != 0 (Keras' key mask);
//   - Causal: j <= i (Keras use_causal_mask, a lower-triangular mask).
//
// Masked keys get probability exactly zero: the softmax runs over the
// allowed keys only, which is what adding a large negative to their scores
// (Keras adds -1e9) computes whenever some key is allowed. A query that
// may attend to no key at all (every key masked) outputs zeros and passes
// zero gradient, where Keras would average every value with equal weights.
type AttentionAttrs struct {
	KeyLengths []int `json:"key_lengths"`
	Causal     bool  `json:"causal"`
	// Scale multiplies the scores q·kᵀ; 0 means 1/sqrt(d) (Vaswani et al.
	// 2017). Only the dot-product op reads it.
	Scale float64 `json:"scale"`
}

// attnMask answers whether query i of batch element b may attend to key j.
type attnMask struct {
	a    AttentionAttrs
	mask *tensor.Tensor // [B, Tk] or nil
	tk   int
}

func (m attnMask) allowed(b, i, j int) bool {
	return (m.a.KeyLengths == nil || j < m.a.KeyLengths[b]) &&
		(m.mask == nil || m.mask.At(b*m.tk+j) != 0) &&
		(!m.a.Causal || j <= i)
}

// newAttnMask validates the lengths and the optional mask input against a
// batch of b elements with tk keys.
func newAttnMask(op string, in []*tensor.Tensor, a AttentionAttrs, mask *tensor.Tensor, b, tk int) (attnMask, error) {
	if a.KeyLengths != nil {
		if len(a.KeyLengths) != b {
			return attnMask{}, Errorf(op, in, "%d key lengths for a batch of %d", len(a.KeyLengths), b)
		}
		for i, l := range a.KeyLengths {
			if l < 0 || l > tk {
				return attnMask{}, Errorf(op, in, "key length %d of batch element %d outside [0, %d]", l, i, tk)
			}
		}
	}
	if mask != nil && !mask.Shape().Equal(tensor.Shape{b, tk}) {
		return attnMask{}, Errorf(op, in, "want mask [%d %d]", b, tk)
	}
	return attnMask{a: a, mask: mask, tk: tk}, nil
}

// maskedSoftmax turns the scores s (one query's row over the keys) into
// probabilities over the keys ok allows, stably (max subtracted), and zeros
// elsewhere; a row with no allowed key becomes all zeros.
func maskedSoftmax[T tensor.Float](s []T, ok func(j int) bool) {
	m := math.Inf(-1)
	for j, v := range s {
		if ok(j) {
			m = math.Max(m, float64(v))
		}
	}
	sum := 0.0
	for j, v := range s {
		e := 0.0
		if ok(j) {
			e = math.Exp(float64(v) - m)
		}
		s[j] = T(e)
		sum += e
	}
	if sum == 0 {
		return
	}
	for j := range s {
		s[j] = T(float64(s[j]) / sum)
	}
}

// softmaxRowGrad overwrites dp, the gradient of one row of probabilities
// p, with the gradient of its scores: p∘(dp - Σ dp∘p). Masked keys (p = 0)
// get zero.
func softmaxRowGrad[T tensor.Float](p, dp []T) {
	_, dot := vec.SumProdDevF64(dp, p, 0) // Σ dp∘p, in float64
	vec.SubMul(dp, p, T(dot))
}

type attentionOp struct {
	a AttentionAttrs
	// [B·H·Tq], for Backward: each query's largest allowed score and
	// log Σ exp(score - rowMax) over its allowed keys (flashForward).
	rowMax, logSum []float64
	// wide: Forward ran the float64 kernels on float32 inputs (wideScores),
	// and Backward must too, against rowMax and logSum.
	wide bool
}

// AttentionOp returns scaled dot-product attention (Vaswani et al. 2017;
// tf.keras.layers.Attention / the core of MultiHeadAttention):
//
//	out = softmax(scale·q·kᵀ, over the allowed keys)·v
//
// for q [B, H, Tq, d], k [B, H, Tk, d], v [B, H, Tk, dv] (or without the
// heads axis, [B, T, d]) and an optional float mask [B, Tk] (see
// AttentionAttrs for the masks and what a fully masked query gives). The
// output is [B, H, Tq, dv] (or [B, Tq, dv]). Gradients flow to q, k and v;
// the mask has none.
//
// The kernels are tiled flash-style (Dao et al. 2022, FlashAttention):
// the [Tq, Tk] probability matrix is never stored. Forward takes one
// block of queries at a time against all the keys it sees and keeps only
// each query's log-sum-exp; Backward recomputes the probabilities from it
// (Algorithm 2) one block of queries at a time. The memory beyond the
// inputs and outputs is one float64 per query, a few [48, Tk] tiles per
// core and each head's packed keys and values, linear in the sequence
// lengths (attention_flash.go).
//
// Scores too large for the inputs' dtype stay finite where softmax of
// them is: float32 inputs whose scores or weighted sums could overflow
// float32 (wideScores: |q|, |k| or |v| near float32's largest value, as
// ±1e38) are computed with the float64 kernels and the result rounded back,
// and float64 scores that overflow to ±Inf are taken as ±MaxFloat64
// (maskRow), so that the largest scores share the probability, as softmax
// of huge finite values gives, instead of Inf − Inf = NaN. Scores that are
// NaN (a NaN or Inf input, or float64 products of opposite infinities)
// stay NaN.
func AttentionOp(a AttentionAttrs) Op {
	a.KeyLengths = slices.Clone(a.KeyLengths) // Backward reads them: the caller may reuse its slice
	return &attentionOp{a: a}
}

// Attention returns the scaled dot-product attention of q, k, v; mask may be nil.
func Attention(q, k, v, mask *tensor.Tensor, a AttentionAttrs) (*tensor.Tensor, error) {
	if mask == nil {
		return run(AttentionOp(a), q, k, v)
	}
	return run(AttentionOp(a), q, k, v, mask)
}

func (o *attentionOp) Name() string { return "attention" }

// attnDims are the shapes shared by the attention ops' kernels.
type attnDims struct{ b, heads, tq, tk, d, dv int }

// dims checks q, k, v and returns their sizes and the mask.
func (o *attentionOp) dims(in []*tensor.Tensor) (attnDims, attnMask, error) {
	q, k, v := in[0].Shape(), in[1].Shape(), in[2].Shape()
	r := len(q)
	if (r != 3 && r != 4) || len(k) != r || len(v) != r ||
		!q[:r-2].Equal(k[:r-2]) || !k[:r-1].Equal(v[:r-1]) || q[r-1] != k[r-1] {
		return attnDims{}, attnMask{}, Errorf("attention", in, "want q [B, H, Tq, d], k [B, H, Tk, d], v [B, H, Tk, dv] (or without H)")
	}
	d := attnDims{b: q[0], heads: 1, tq: q[r-2], tk: k[r-2], d: q[r-1], dv: v[r-1]}
	if r == 4 {
		d.heads = q[1]
	}
	var mask *tensor.Tensor
	if len(in) == 4 {
		mask = in[3]
	}
	m, err := newAttnMask("attention", in, o.a, mask, d.b, d.tk)
	return d, m, err
}

// scale returns the score scale: the attribute, or 1/sqrt(d) when it is 0.
func (o *attentionOp) scale(d attnDims) float64 {
	if o.a.Scale != 0 {
		return o.a.Scale
	}
	return 1 / math.Sqrt(float64(max(d.d, 1)))
}

// Check is attention's device-free check (Checker): q, k, v (and the
// mask) of one float dtype and matching shapes, and the key lengths.
func (o *attentionOp) Check(in []*tensor.Tensor) error {
	if len(in) != 3 && len(in) != 4 {
		return Errorf("attention", in, "want inputs q, k, v and optional mask")
	}
	if err := checkCount("attention", in, len(in)); err != nil {
		return err
	}
	if _, err := checkShapes("attention", in[:3], 3); err != nil {
		return Errorf("attention", in, "want float32 or float64 q, k, v of one dtype")
	}
	_, _, err := o.dims(in)
	return err
}

func (o *attentionOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 3 && len(in) != 4 {
		return nil, Errorf("attention", in, "want inputs q, k, v and optional mask")
	}
	if err := checkArity("attention", in, len(in)); err != nil {
		return nil, err
	}
	dt, err := checkFloat("attention", in[:3], 3)
	if err != nil {
		return nil, Errorf("attention", in, "want float32 or float64 q, k, v of one dtype")
	}
	d, m, err := o.dims(in)
	if err != nil {
		return nil, err
	}
	outShape := append(in[0].Shape()[:in[0].Rank()-1].Clone(), d.dv)
	out := tensor.Empty(dt, outShape...) // flashForward writes every row
	f := newFlash(d, m, o.scale(d))
	o.rowMax, o.logSum = make([]float64, d.b*d.heads*d.tq), make([]float64, d.b*d.heads*d.tq)
	o.wide = dt == tensor.Float32 && wideScores(f, in[0].Float32s(), in[1].Float32s(), in[2].Float32s())
	switch {
	case o.wide:
		out64 := make([]float64, out.Size())
		flashForward(f, widen(in[0].Float32s()), widen(in[1].Float32s()), widen(in[2].Float32s()), out64, o.rowMax, o.logSum)
		narrow(out.Float32s(), out64)
	case dt == tensor.Float32:
		flashForward(f, in[0].Float32s(), in[1].Float32s(), in[2].Float32s(), out.Float32s(), o.rowMax, o.logSum)
	case dt == tensor.Float64:
		flashForward(f, in[0].Float64s(), in[1].Float64s(), in[2].Float64s(), out.Float64s(), o.rowMax, o.logSum)
	}
	return out, nil
}

func (o *attentionOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	d, m, _ := o.dims(in)
	f := newFlash(d, m, o.scale(d))
	// The kernel writes every row of dq and accumulates dk and dv.
	grads := []*tensor.Tensor{tensor.Empty(in[0].DType(), in[0].Shape()...), tensor.ZerosLike(in[1]), tensor.ZerosLike(in[2]), nil}[:len(in)]
	switch {
	case o.wide && out.DType() == tensor.Float32:
		g64 := [3][]float64{make([]float64, grads[0].Size()), make([]float64, grads[1].Size()), make([]float64, grads[2].Size())}
		flashBackward(f, widen(in[0].Float32s()), widen(in[1].Float32s()), widen(in[2].Float32s()), widen(gout.Float32s()), o.rowMax, o.logSum,
			g64[0], g64[1], g64[2])
		for i, g := range g64 {
			narrow(grads[i].Float32s(), g)
		}
	case out.DType() == tensor.Float32:
		flashBackward(f, in[0].Float32s(), in[1].Float32s(), in[2].Float32s(), gout.Float32s(), o.rowMax, o.logSum,
			grads[0].Float32s(), grads[1].Float32s(), grads[2].Float32s())
	case out.DType() == tensor.Float64:
		flashBackward(f, in[0].Float64s(), in[1].Float64s(), in[2].Float64s(), gout.Float64s(), o.rowMax, o.logSum,
			grads[0].Float64s(), grads[1].Float64s(), grads[2].Float64s())
	}
	for i := 0; i < 3; i++ {
		if !need[i] {
			grads[i] = nil
		}
	}
	return grads, nil
}

type additiveAttentionOp struct {
	a     AttentionAttrs
	infer bool // keep nothing for Backward (AdditiveAttentionInferenceOp)
	probs any  // []T [B, Tq, Tk]
	tanh  any  // []T [B, Tq, Tk, A]: tanh(q_i + k_j)
}

// AdditiveAttentionOp returns additive (Bahdanau) attention (Bahdanau et
// al. 2015; tf.keras.layers.AdditiveAttention with use_scale=True, TF's
// BahdanauAttention): for projected queries q [B, Tq, A] (W1·query),
// projected keys k [B, Tk, A] (W2·memory, computed once per source), the
// scale vector v [A], values [B, Tk, Dv] and an optional mask [B, Tk],
//
//	score[b, i, j] = Σ_a v_a·tanh(q[b, i, a] + k[b, j, a])
//	out[b, i] = Σ_j softmax_j(score[b, i, :], over the allowed keys)·values[b, j]
//
// with the masks of AttentionAttrs (KeyLengths for source lengths; Scale is
// not used). The output is [B, Tq, Dv]; gradients flow to q, k, v and values.
func AdditiveAttentionOp(a AttentionAttrs) Op {
	a.KeyLengths = slices.Clone(a.KeyLengths)
	return &additiveAttentionOp{a: a}
}

// AdditiveAttentionInferenceOp returns AdditiveAttentionOp for a forward
// pass only (an inference tape's): it keeps no tanh(q_i + k_j) for
// Backward, building each query's row of them in one reused buffer, and
// its Backward fails.
func AdditiveAttentionInferenceOp(a AttentionAttrs) Op {
	a.KeyLengths = slices.Clone(a.KeyLengths)
	return &additiveAttentionOp{a: a, infer: true}
}

// AdditiveAttention returns additive attention; mask may be nil. See AdditiveAttentionOp.
func AdditiveAttention(q, k, v, values, mask *tensor.Tensor, a AttentionAttrs) (*tensor.Tensor, error) {
	if mask == nil {
		return run(AdditiveAttentionOp(a), q, k, v, values)
	}
	return run(AdditiveAttentionOp(a), q, k, v, values, mask)
}

func (o *additiveAttentionOp) Name() string { return "additive_attention" }

func (o *additiveAttentionOp) dims(in []*tensor.Tensor) (attnDims, attnMask, error) {
	q, k, v, val := in[0].Shape(), in[1].Shape(), in[2].Shape(), in[3].Shape()
	if len(q) != 3 || len(k) != 3 || len(v) != 1 || len(val) != 3 ||
		q[0] != k[0] || q[2] != k[2] || v[0] != q[2] || !val[:2].Equal(k[:2]) {
		return attnDims{}, attnMask{}, Errorf("additive_attention", in, "want q [B, Tq, A], k [B, Tk, A], scale [A] and values [B, Tk, Dv]")
	}
	if o.a.Scale != 0 {
		return attnDims{}, attnMask{}, Errorf("additive_attention", in, "attrs.Scale %v is not used (the scale is the input v)", o.a.Scale)
	}
	d := attnDims{b: q[0], heads: 1, tq: q[1], tk: k[1], d: q[2], dv: val[2]}
	var mask *tensor.Tensor
	if len(in) == 5 {
		mask = in[4]
	}
	m, err := newAttnMask("additive_attention", in, o.a, mask, d.b, d.tk)
	return d, m, err
}

func (o *additiveAttentionOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 4 && len(in) != 5 {
		return nil, Errorf("additive_attention", in, "want inputs q, k, v, values and optional mask")
	}
	if err := checkArity("additive_attention", in, len(in)); err != nil {
		return nil, err
	}
	dt, err := checkFloat("additive_attention", in[:4], 4)
	if err != nil {
		return nil, Errorf("additive_attention", in, "want float32 or float64 q, k, v, values of one dtype")
	}
	d, m, err := o.dims(in)
	if err != nil {
		return nil, err
	}
	out := tensor.Zeros(dt, d.b, d.tq, d.dv)
	switch dt {
	case tensor.Float32:
		o.probs, o.tanh = additiveForward(d, m, in[0].Float32s(), in[1].Float32s(), in[2].Float32s(), in[3].Float32s(), out.Float32s(), !o.infer)
	case tensor.Float64:
		o.probs, o.tanh = additiveForward(d, m, in[0].Float64s(), in[1].Float64s(), in[2].Float64s(), in[3].Float64s(), out.Float64s(), !o.infer)
	}
	return out, nil
}

// additiveForward computes the attention into out and returns the
// probabilities and, when keep is set, every tanh(q_i + k_j) for Backward.
// The batch elements run as tasks over the cores, each writing its own
// rows.
func additiveForward[T tensor.Float](d attnDims, m attnMask, q, k, v, val, out []T, keep bool) (p, th []T) {
	a := d.d
	p = make([]T, d.b*d.tq*d.tk)
	if keep {
		th = make([]T, d.b*d.tq*d.tk*a)
	}
	par.Tasks(d.b, 4*d.b*d.tq*d.tk*(a+d.dv), func() func(int) {
		var row0 []T // one query's row at a time when nothing is kept
		if !keep {
			row0 = make([]T, d.tk*a)
		}
		return func(b int) {
			for i := 0; i < d.tq; i++ {
				row := p[(b*d.tq+i)*d.tk : (b*d.tq+i+1)*d.tk]
				qi := q[(b*d.tq+i)*a : (b*d.tq+i+1)*a]
				// The row's tanh(q_i + k_j) for every j at once, so that the
				// additions, tanh (vectorised for float32) and dot products
				// each run over whole rows.
				blk := row0
				if keep {
					blk = th[(b*d.tq+i)*d.tk*a : (b*d.tq+i+1)*d.tk*a]
				}
				kb := k[b*d.tk*a : (b+1)*d.tk*a]
				for j := range row {
					vec.Sum(blk[j*a:(j+1)*a], kb[j*a:(j+1)*a], qi)
				}
				vec.Tanh(blk, blk)
				for j := range row {
					row[j] = vec.Dot(blk[j*a:(j+1)*a], v)
				}
				maskedSoftmax(row, func(j int) bool { return m.allowed(b, i, j) })
			}
			gemm.Serial(false, false, d.tq, d.dv, d.tk, 1, p[b*d.tq*d.tk:], d.tk, val[b*d.tk*d.dv:], d.dv, 0, out[b*d.tq*d.dv:], d.dv)
		}
	})
	return p, th
}

func (o *additiveAttentionOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if o.infer || o.tanh == nil {
		return nil, Errorf("additive_attention", in, "no backward: the op ran for inference (AdditiveAttentionInferenceOp) or not at all")
	}
	d, _, _ := o.dims(in)
	grads := make([]*tensor.Tensor, len(in))
	for i := 0; i < 4; i++ {
		grads[i] = tensor.ZerosLike(in[i])
	}
	switch out.DType() {
	case tensor.Float32:
		additiveBackward(d, in[2].Float32s(), in[3].Float32s(), o.probs.([]float32), o.tanh.([]float32), gout.Float32s(),
			grads[0].Float32s(), grads[1].Float32s(), grads[2].Float32s(), grads[3].Float32s())
	case tensor.Float64:
		additiveBackward(d, in[2].Float64s(), in[3].Float64s(), o.probs.([]float64), o.tanh.([]float64), gout.Float64s(),
			grads[0].Float64s(), grads[1].Float64s(), grads[2].Float64s(), grads[3].Float64s())
	}
	for i := 0; i < 4; i++ {
		if !need[i] {
			grads[i] = nil
		}
	}
	return grads, nil
}

// valueGrads sets one batch element's dval = pᵀ·dout [tk, dv] and the
// probabilities' gradient de = dout·valᵀ [tq, tk]. A decoder step's
// single query (tq 1) takes the vector loops: an outer product and tk dot
// products are too small for the GEMM's packing to pay.
func valueGrads[T tensor.Float](d attnDims, p, dout, val, dval, de []T) {
	if d.tq != 1 {
		gemm.Serial(true, false, d.tk, d.dv, d.tq, 1, p, d.tk, dout, d.dv, 0, dval, d.dv)
		gemm.Serial(false, true, d.tq, d.tk, d.dv, 1, dout, d.dv, val, d.dv, 0, de, d.tk)
		return
	}
	do := dout[:d.dv]
	for j := range d.tk {
		dj := dval[j*d.dv : (j+1)*d.dv]
		clear(dj)
		vec.Axpy(dj, do, p[j])
		de[j] = vec.Dot(do, val[j*d.dv:(j+1)*d.dv])
	}
}

// additiveBackward: dValues = Pᵀ·dO and dP = dO·Valuesᵀ per batch element,
// dE = P∘(dP - rowsum(dP∘P)), then per (i, j, a) with t = tanh(q_i + k_j):
// dv_a += dE·t and dq_i,a, dk_j,a += dE·v_a·(1 - t²).
func additiveBackward[T tensor.Float](d attnDims, v, val, p, th, dout, dq, dk, dv, dval []T) {
	a := d.d
	dvs := make([]T, d.b*a) // each batch element's share of dv, summed in order below
	par.Tasks(d.b, 6*d.b*d.tq*d.tk*(a+d.dv), func() func(int) {
		de := make([]T, d.tq*d.tk)
		return func(b int) {
			pb, do, dvb := p[b*d.tq*d.tk:(b+1)*d.tq*d.tk], dout[b*d.tq*d.dv:], dvs[b*a:(b+1)*a]
			valueGrads(d, pb, do, val[b*d.tk*d.dv:], dval[b*d.tk*d.dv:], de)
			for i := 0; i < d.tq; i++ {
				softmaxRowGrad(pb[i*d.tk:(i+1)*d.tk], de[i*d.tk:(i+1)*d.tk])
				qi := dq[(b*d.tq+i)*a:][:a]
				for j := 0; j < d.tk; j++ {
					if e := de[i*d.tk+j]; e != 0 {
						vec.TanhScoreGrad(dvb, qi, dk[(b*d.tk+j)*a:][:a], th[((b*d.tq+i)*d.tk+j)*a:][:a], v, e)
					}
				}
			}
		}
	})
	for b := range d.b {
		vec.Add(dv, dvs[b*a:(b+1)*a])
	}
}
