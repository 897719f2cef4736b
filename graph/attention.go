package graph

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Attention returns scaled dot-product attention softmax(scale·q·kᵀ)·v
// over the keys a allows (ops.AttentionOp): q [B, H, Tq, d], k [B, H, Tk,
// d], v [B, H, Tk, dv] or the same without H; mask [B, Tk] may be nil.
func Attention(q, k, v, mask *Value, a ops.AttentionAttrs) *Value {
	if mask == nil {
		return apply(ops.AttentionOp(a), q, k, v)
	}
	return apply(ops.AttentionOp(a), q, k, v, mask)
}

// AdditiveAttention returns Bahdanau attention (ops.AdditiveAttentionOp)
// of projected queries q [B, Tq, A] over projected keys k [B, Tk, A] with
// scale vector v [A], averaging values [B, Tk, Dv]; mask may be nil.
func AdditiveAttention(q, k, v, values, mask *Value, a ops.AttentionAttrs) *Value {
	op := ops.AdditiveAttentionOp(a)
	if q != nil && q.tape != nil && !q.tape.grad {
		op = ops.AdditiveAttentionInferenceOp(a) // nothing kept for a Backward that cannot come
	}
	if mask == nil {
		return apply(op, q, k, v, values)
	}
	return apply(op, q, k, v, values, mask)
}

// PadSeq returns the ragged batch s, values [total, D], as a padded [B, T,
// D] with T its longest length and zeros after each sequence's end, and
// the lengths (for attention's KeyLengths). It is a gather from the values
// with one zero row appended, so gradients flow back to s.Values.
func PadSeq(s Seq) (*Value, []int) {
	if s.Err() != nil {
		return failed(s.Values, s.Err()), nil
	}
	v := s.Values
	if v.t.Rank() != 2 {
		return failed(v, fmt.Errorf("graph: PadSeq of values %v%v; want [total, D]", v.t.DType(), v.t.Shape())), nil
	}
	if _, err := tensor.NewRagged(v.t, s.Offsets); err != nil { // a Seq literal's offsets
		return failed(v, fmt.Errorf("graph: PadSeq: %w", err)), nil
	}
	lengths := s.Lengths()
	t := 0
	for _, l := range lengths {
		t = max(t, l)
	}
	total := s.Offsets[len(s.Offsets)-1]
	idx := make([]int64, len(lengths)*t)
	for b, l := range lengths {
		for j := range t {
			idx[b*t+j] = int64(total) // the zero row
			if j < l {
				idx[b*t+j] = int64(s.Offsets[b] + j)
			}
		}
	}
	zero, ix := tensor.Zeros(v.t.DType(), 1, v.t.Dim(1)), tensor.MustFromSlice(idx, len(idx))
	if dev := v.t.Device(); dev != nil { // the zero row and the indices go where the values are
		var err error
		if zero, err = v.tape.Move(zero, dev); err == nil {
			ix, err = v.tape.Move(ix, dev)
		}
		if err != nil {
			return failed(v, fmt.Errorf("graph: PadSeq: %w", err)), nil
		}
	}
	withZero := Concat(0, v, v.tape.Const(zero))
	rows := Gather(withZero, ix, 0)
	return Reshape(rows, len(lengths), t, v.t.Dim(1)), lengths
}
