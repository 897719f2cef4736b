package layers

import (
	"errors"
	"fmt"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// TransformerDecoderCache is one TransformerDecoderLayer's key/value cache
// for incremental decoding (fairseq's incremental_state, Hugging Face's
// past_key_values; Ott et al. 2019): the self-attention's projected keys
// and values of the positions decoded so far, and the cross-attention's
// projected keys and values of the memory, computed once per source.
//
// The self-attention buffers are [rows, heads, MaxLen, key_dim],
// allocated once: each Step writes its position's key and value in place
// and attends over the first Len positions (the attention op's key
// lengths), so no step copies the prefix. Reorder selects rows for beam
// search; it copies the live prefix into a second pair of buffers kept
// for that, and does nothing when the rows stay as they are.
//
// A cache lives on the host and serves inference: Step fails on a
// training tape.
type TransformerDecoderCache struct {
	heads, keyDim, maxLen int
	n                     int            // positions cached
	selfK, selfV          *tensor.Tensor // [rows, heads, maxLen, key_dim]
	spareK, spareV        *tensor.Tensor // Reorder's target, swapped with selfK, selfV
	crossK, crossV        *tensor.Tensor // [rows, heads, Tk, key_dim]
	memLengths            []int          // each row's source length
	origin                []int          // the memory row each row's cross keys came from
}

// NewCache projects memory [B, Tk, DModel] (the encoder's output, padded;
// row b holds memLengths[b] real positions, nil meaning all Tk) through
// the cross-attention's key and value projections and returns an empty
// cache for decoding up to maxLen positions of B rows. Run it on an
// inference tape (graph.NewEvalTape); the cache keeps copies, so the tape
// may be released afterwards.
func (l *TransformerDecoderLayer) NewCache(memory *graph.Value, memLengths []int, maxLen int) (*TransformerDecoderCache, error) {
	if l == nil || l.SelfAttention == nil || l.CrossAttention == nil || l.FF == nil || l.Norm1 == nil || l.Norm2 == nil || l.Norm3 == nil {
		return nil, errors.New("layers: transformer decoder cache: layer not made by NewTransformerDecoderLayer")
	}
	if memory == nil || memory.Tape() == nil {
		return nil, errors.New("layers: transformer decoder cache: nil memory")
	}
	if err := memory.Err(); err != nil {
		return nil, err
	}
	m := l.CrossAttention
	if err := missing("transformer decoder cache", m.WK, m.BK, m.WV, m.BV); err != nil {
		return nil, err
	}
	s := memory.Shape()
	if len(s) != 3 || s[0] < 1 || s[2] != m.WK.Value.Dim(0) {
		return nil, fmt.Errorf("layers: transformer decoder cache: memory %v; want [B, Tk, %d] with B >= 1", s, m.WK.Value.Dim(0))
	}
	if memory.Device() != nil {
		return nil, errors.New("layers: transformer decoder cache: memory on a device; the cache runs on the host")
	}
	if maxLen < 1 {
		return nil, fmt.Errorf("layers: transformer decoder cache: maxLen %d; want >= 1", maxLen)
	}
	b, tk := s[0], s[1]
	lengths := slices.Clone(memLengths)
	if lengths == nil {
		lengths = make([]int, b)
		for i := range lengths {
			lengths[i] = tk
		}
	}
	if len(lengths) != b {
		return nil, fmt.Errorf("layers: transformer decoder cache: %d memory lengths for a memory of %d rows", len(lengths), b)
	}
	for i, n := range lengths {
		if n < 0 || n > tk {
			return nil, fmt.Errorf("layers: transformer decoder cache: memory length %d of row %d outside [0, %d]", n, i, tk)
		}
	}
	k, err := m.project(memory, m.WK, m.BK).Tensor()
	if err != nil {
		return nil, fmt.Errorf("layers: transformer decoder cache: cross-attention keys: %w", err)
	}
	v, err := m.project(memory, m.WV, m.BV).Tensor()
	if err != nil {
		return nil, fmt.Errorf("layers: transformer decoder cache: cross-attention values: %w", err)
	}
	sa := l.SelfAttention
	dt := memory.DType()
	c := &TransformerDecoderCache{
		heads: sa.Heads, keyDim: sa.KeyDim, maxLen: maxLen,
		selfK: tensor.Zeros(dt, b, sa.Heads, maxLen, sa.KeyDim), selfV: tensor.Zeros(dt, b, sa.Heads, maxLen, sa.KeyDim),
		crossK: k.Clone(), crossV: v.Clone(), memLengths: lengths, origin: make([]int, b),
	}
	for i := range c.origin {
		c.origin[i] = i
	}
	return c, nil
}

// Len returns how many positions the cache holds (the next Step's position).
func (c *TransformerDecoderCache) Len() int {
	if c == nil {
		return 0
	}
	return c.n
}

// Rows returns the cache's batch rows.
func (c *TransformerDecoderCache) Rows() int {
	if c == nil || c.selfK == nil {
		return 0
	}
	return c.selfK.Dim(0)
}

// Step runs the layer on the next position x [B, 1, DModel] of each row
// and returns its output [B, 1, DModel]: the same as row b's position
// Len() of Forward over the whole prefix with the causal mask and the
// memory's lengths (the cross-attention's key lengths), computed from the
// new position alone. The self-attention's key and value for the
// position are appended to c, which then holds one more position.
func (l *TransformerDecoderLayer) Step(x *graph.Value, c *TransformerDecoderCache) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("transformer decoder step", x)
	}
	if l == nil || l.SelfAttention == nil || l.CrossAttention == nil || l.FF == nil || l.Norm1 == nil || l.Norm2 == nil || l.Norm3 == nil {
		return t.Fail(errors.New("layers: transformer decoder step: layer not made by NewTransformerDecoderLayer"))
	}
	if c == nil || c.selfK == nil {
		return t.Fail(errors.New("layers: transformer decoder step: cache not made by NewCache"))
	}
	if t.Training() {
		return t.Fail(errors.New("layers: transformer decoder step: a training tape; the cache serves inference (use graph.NewEvalTape)"))
	}
	if err := missing("transformer decoder step", l.SelfAttention.WQ, l.SelfAttention.WK, l.SelfAttention.BK, l.SelfAttention.WV, l.SelfAttention.BV); err != nil {
		return t.Fail(err)
	}
	s := x.Shape()
	if s == nil {
		return x
	}
	d := l.SelfAttention.WQ.Value.Dim(0)
	if len(s) != 3 || s[0] != c.Rows() || s[1] != 1 || s[2] != d {
		return t.Fail(fmt.Errorf("layers: transformer decoder step: x %v; want [%d, 1, %d] (the cache's rows, one position)", s, c.Rows(), d))
	}
	if c.n >= c.maxLen {
		return t.Fail(fmt.Errorf("layers: transformer decoder step: the cache holds its maximum %d positions", c.maxLen))
	}
	if x.DType() != c.selfK.DType() {
		return t.Fail(fmt.Errorf("layers: transformer decoder step: x %v, cache %v", x.DType(), c.selfK.DType()))
	}
	y := sublayer{l.Norm1, l.preNorm, l.drop}.apply(x, func(h *graph.Value) *graph.Value { return c.attendSelf(l.SelfAttention, h) })
	y = sublayer{l.Norm2, l.preNorm, l.drop}.apply(y, func(h *graph.Value) *graph.Value { return c.attendCross(l.CrossAttention, h) })
	y = sublayer{l.Norm3, l.preNorm, l.drop}.apply(y, l.FF.Forward)
	if y.Err() == nil {
		c.n++
	}
	return y
}

// attendSelf writes h's key and value [B, 1, DModel] → [B, heads, 1,
// key_dim] at position n and attends h's query over positions 0..n.
func (c *TransformerDecoderCache) attendSelf(m *MultiHeadAttention, h *graph.Value) *graph.Value {
	t, hk := h.Tape(), m.Heads*m.KeyDim
	for _, p := range []struct {
		w, b *graph.Param
		buf  *tensor.Tensor
	}{{m.WK, m.BK, c.selfK}, {m.WV, m.BV, c.selfV}} {
		// [B, 1, heads·key_dim] is laid out as [B, heads, 1, key_dim].
		kv, err := graph.Linear(h, graph.Reshape(t.Param(p.w), -1, hk), graph.Reshape(t.Param(p.b), hk)).Tensor()
		if err != nil {
			return t.Fail(err)
		}
		c.write(p.buf, kv)
	}
	lengths := make([]int, c.Rows())
	for i := range lengths {
		lengths[i] = c.n + 1
	}
	return c.attend(m, h, c.selfK, c.selfV, lengths)
}

// attendCross attends h's query over the cached memory keys and values.
func (c *TransformerDecoderCache) attendCross(m *MultiHeadAttention, h *graph.Value) *graph.Value {
	return c.attend(m, h, c.crossK, c.crossV, c.memLengths)
}

// attend is MultiHeadAttention.Forward for one query position h [B, 1, D]
// over projected keys and values k, v [B, heads, Tk, key_dim], of which
// row b's first lengths[b] are attended.
func (c *TransformerDecoderCache) attend(m *MultiHeadAttention, h *graph.Value, k, v *tensor.Tensor, lengths []int) *graph.Value {
	t, hk := h.Tape(), m.Heads*m.KeyDim
	b := c.Rows()
	q := graph.Linear(h, graph.Reshape(t.Param(m.WQ), -1, hk), graph.Reshape(t.Param(m.BQ), hk))
	o := graph.Attention(graph.Reshape(q, b, m.Heads, 1, m.KeyDim), t.Const(k), t.Const(v), nil, ops.AttentionAttrs{KeyLengths: lengths})
	// [B, heads, 1, key_dim] is laid out as [B, 1, heads·key_dim].
	return graph.Linear(graph.Reshape(o, b, 1, hk), graph.Reshape(t.Param(m.WO), hk, -1), t.Param(m.BO))
}

// write copies kv [B, heads, 1, key_dim] into buf [B, heads, maxLen,
// key_dim] at position n.
func (c *TransformerDecoderCache) write(buf, kv *tensor.Tensor) {
	switch dst := buf.Raw().(type) {
	case []float32:
		writePosition(dst, kv.Float32s(), c.n, c.maxLen, c.keyDim)
	case []float64:
		writePosition(dst, kv.Float64s(), c.n, c.maxLen, c.keyDim)
	}
}

func writePosition[T float32 | float64](dst, src []T, n, maxLen, d int) {
	for r := range len(src) / d { // r runs over (row, head)
		copy(dst[(r*maxLen+n)*d:(r*maxLen+n+1)*d], src[r*d:(r+1)*d])
	}
}

// Reorder makes row i of the cache what row rows[i] was (repeats allowed,
// any number of rows): how beam search tiles a source over its beams and
// keeps the parents of the surviving hypotheses (fairseq's
// reorder_incremental_state, a gather along the batch axis). The
// self-attention's cached positions are copied into the spare buffers,
// which then swap in; the memory's keys and values are gathered only when
// some row changes source.
func (c *TransformerDecoderCache) Reorder(rows []int) error {
	if c == nil || c.selfK == nil {
		return errors.New("layers: transformer decoder cache Reorder: cache not made by NewCache")
	}
	b := c.Rows()
	same := len(rows) == b
	for i, r := range rows {
		if r < 0 || r >= b {
			return fmt.Errorf("layers: transformer decoder cache Reorder: row %d of a cache of %d rows", r, b)
		}
		same = same && r == i
	}
	if len(rows) == 0 {
		return errors.New("layers: transformer decoder cache Reorder: no rows")
	}
	if same {
		return nil
	}
	if c.spareK == nil || c.spareK.Dim(0) != len(rows) { // a new row count: new storage
		dt := c.selfK.DType()
		c.spareK, c.spareV = tensor.Zeros(dt, len(rows), c.heads, c.maxLen, c.keyDim), tensor.Zeros(dt, len(rows), c.heads, c.maxLen, c.keyDim)
	}
	c.copyRows(c.spareK, c.selfK, rows)
	c.copyRows(c.spareV, c.selfV, rows)
	c.selfK, c.spareK = c.spareK, c.selfK
	c.selfV, c.spareV = c.spareV, c.selfV

	origin, lengths := make([]int, len(rows)), make([]int, len(rows))
	moved := len(rows) != b
	for i, r := range rows {
		origin[i], lengths[i] = c.origin[r], c.memLengths[r]
		moved = moved || origin[i] != c.origin[i]
	}
	if moved {
		idx := make([]int64, len(rows))
		for i, r := range rows {
			idx[i] = int64(r)
		}
		ix := tensor.MustFromSlice(idx, len(idx))
		k, err := ops.Gather(c.crossK, ix, 0)
		if err != nil {
			return fmt.Errorf("layers: transformer decoder cache Reorder: %w", err)
		}
		v, err := ops.Gather(c.crossV, ix, 0)
		if err != nil {
			return fmt.Errorf("layers: transformer decoder cache Reorder: %w", err)
		}
		c.crossK, c.crossV = k, v
	}
	c.origin, c.memLengths = origin, lengths
	return nil
}

// copyRows copies the first n positions of src's rows rows into dst's
// rows 0, 1, ... (both [rows, heads, maxLen, key_dim]).
func (c *TransformerDecoderCache) copyRows(dst, src *tensor.Tensor, rows []int) {
	switch d := dst.Raw().(type) {
	case []float32:
		copyPrefixes(d, src.Float32s(), rows, c.heads, c.maxLen*c.keyDim, c.n*c.keyDim)
	case []float64:
		copyPrefixes(d, src.Float64s(), rows, c.heads, c.maxLen*c.keyDim, c.n*c.keyDim)
	}
}

// copyPrefixes copies the first prefix elements of each (row, head)
// block of stride elements.
func copyPrefixes[T float32 | float64](dst, src []T, rows []int, heads, stride, prefix int) {
	for i, r := range rows {
		for h := range heads {
			to, from := (i*heads+h)*stride, (r*heads+h)*stride
			copy(dst[to:to+prefix], src[from:from+prefix])
		}
	}
}
