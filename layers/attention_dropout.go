package layers

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ScaledDotProductAttention returns softmax(scale·q·kᵀ over the allowed
// keys)·v for q [B, H, Tq, d], k [B, H, Tk, d], v [B, H, Tk, dv] and an
// optional key mask [B, Tk] (nonzero: attend), with a's key lengths,
// causal flag and scale (ops.AttentionAttrs), and dropout on the attention
// probabilities as Vaswani et al. 2017 (section 5.4) and BERT's
// attention_probs_dropout_prob apply it.
//
// Without dropout to apply (rate 0, or a tape that is not training) it is
// the fused flash attention op (graph.Attention). With dropout it is
// composed from ops so that the probabilities exist to be dropped:
// s = scale·q·kᵀ (graph.MatMul), the masked keys' scores replaced by
// -1e30 (graph.Where), p = softmax(s)·allowed (so that a query with no
// allowed key gives zeros, as the fused op does), dropout(p)·v.
func ScaledDotProductAttention(q, k, v, mask *graph.Value, a ops.AttentionAttrs, drop Dropout) *graph.Value {
	t := q.Tape()
	if t == nil {
		return noTape("attention", q)
	}
	if drop.Rate == 0 || !t.Training() {
		return graph.Attention(q, k, v, mask, a)
	}
	qs, ks := q.Shape(), k.Shape()
	if qs == nil {
		return q
	}
	if ks == nil {
		return failedOr(k, "attention's keys")
	}
	if len(qs) != 4 || len(ks) != 4 || ks[0] != qs[0] {
		return t.Fail(fmt.Errorf("layers: attention with dropout: q %v, k %v; want [B, H, Tq, d] and [B, H, Tk, d]", qs, ks))
	}
	b, tq, tk, d := qs[0], qs[2], ks[2], qs[3]
	allowed, err := allowedKeys(mask, a, b, tq, tk, q.DType())
	if err != nil {
		return t.Fail(err)
	}
	scale := a.Scale
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(max(d, 1)))
	}
	sc, _ := tensor.Full(q.DType(), scale, 1)
	s := graph.Mul(graph.MatMul(q, k, false, true), constOn(q, sc))
	ok := constOn(q, allowed)
	neg, _ := tensor.Full(q.DType(), -1e30, 1)
	s = graph.Where(ok, s, constOn(q, neg))
	p := graph.Mul(graph.Softmax(s, -1), ok)
	return graph.MatMul(drop.Forward(p), v, false, false)
}

// allowedKeys returns the [B, 1, Tq, Tk] mask, 1 where query i of batch
// element b may attend to key j (ops.AttentionAttrs' rules) and 0
// elsewhere.
func allowedKeys(mask *graph.Value, a ops.AttentionAttrs, b, tq, tk int, dt tensor.DType) (*tensor.Tensor, error) {
	var m *tensor.Tensor
	if mask != nil {
		var err error
		if m, err = mask.Host(); err != nil {
			return nil, err
		}
		if !m.Shape().Equal(tensor.Shape{b, tk}) {
			return nil, fmt.Errorf("layers: attention mask %v, want [%d %d]", m.Shape(), b, tk)
		}
	}
	if a.KeyLengths != nil && len(a.KeyLengths) != b {
		return nil, fmt.Errorf("layers: attention: %d key lengths for a batch of %d", len(a.KeyLengths), b)
	}
	out := make([]float64, b*tq*tk)
	for bi := range b {
		for i := range tq {
			for j := range tk {
				if (a.KeyLengths == nil || j < a.KeyLengths[bi]) && (m == nil || m.At(bi*tk+j) != 0) && (!a.Causal || j <= i) {
					out[(bi*tq+i)*tk+j] = 1
				}
			}
		}
	}
	t64 := tensor.MustFromSlice(out, b, 1, tq, tk)
	if dt == tensor.Float64 {
		return t64, nil
	}
	return t64.Cast(dt)
}

// ForwardMasked is Forward with an optional key mask [B, Tk] (nonzero:
// attend; Keras' attention_mask restricted to keys, PyTorch's
// key_padding_mask inverted) and dropout on the attention probabilities
// (Keras' dropout, PyTorch's MultiheadAttention dropout), applied by
// ScaledDotProductAttention.
func (m *MultiHeadAttention) ForwardMasked(query, key, value, mask *graph.Value, a ops.AttentionAttrs, drop Dropout) *graph.Value {
	t := query.Tape()
	if t == nil {
		return noTape("multi-head attention", query)
	}
	if m == nil {
		return t.Fail(fmt.Errorf("layers: multi-head attention is nil"))
	}
	if err := missing("multi-head attention", m.WQ, m.BQ, m.WK, m.BK, m.WV, m.BV, m.WO, m.BO); err != nil {
		return t.Fail(err)
	}
	if key == nil {
		key = value
	}
	q, k, v := m.project(query, m.WQ, m.BQ), m.project(key, m.WK, m.BK), m.project(value, m.WV, m.BV)
	o := graph.Transpose(ScaledDotProductAttention(q, k, v, mask, a, drop), 0, 2, 1, 3) // [B, Tq, heads, key_dim]
	s := o.Shape()
	if s == nil {
		return o
	}
	hk := m.Heads * m.KeyDim
	return graph.Linear(graph.Reshape(o, s[0], s[1], hk), graph.Reshape(t.Param(m.WO), hk, -1), t.Param(m.BO))
}
