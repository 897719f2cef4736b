package layers

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// MultiHeadAttention is tf.keras.layers.MultiHeadAttention (Vaswani et al.
// 2017) with value_dim = key_dim: query, key and value projections with
// kernels [D, heads, key_dim] and biases [heads, key_dim], scaled
// dot-product attention per head (scale 1/sqrt(key_dim)), and an output
// projection with kernel [heads, key_dim, D_out] and bias [D_out].
//
// It is composed from graph ops: each projection is graph.Linear with the
// kernel reshaped to [D, heads·key_dim], then a reshape to [B, T, heads,
// key_dim] and a transpose to [B, heads, T, key_dim]; the heads go through
// the fused ops.AttentionOp (whose own reference is the matmul-softmax
// composition, see graph's tests); the inverse transpose and reshape and
// a Linear with the output kernel reshaped to [heads·key_dim, D_out] finish.
// Kernels are Glorot-uniform with Keras' fans for their 3-D shapes
// (fan_in = D·heads resp. heads·key_dim, fan_out = D·key_dim resp.
// key_dim·D_out); biases are zero. Attention dropout is not implemented.
type MultiHeadAttention struct {
	Heads, KeyDim          int
	WQ, WK, WV, BQ, BK, BV *graph.Param
	WO, BO                 *graph.Param
}

// MultiHeadAttentionConfig shapes a MultiHeadAttention: queries of
// QueryDim and keys/values of ValueDim features, projected to Heads ×
// KeyDim and back to OutDim (Keras' num_heads, key_dim, output_shape).
type MultiHeadAttentionConfig struct {
	Heads, KeyDim              int
	QueryDim, ValueDim, OutDim int
}

// NewMultiHeadAttention returns the layer shaped by cfg. Parameters are
// named name/query/kernel, .../bias, key, value, attention_output as Keras
// names them.
func NewMultiHeadAttention(name string, cfg MultiHeadAttentionConfig, rng *rand.Rand, opts ...Option) (*MultiHeadAttention, error) {
	heads, keyDim, queryDim, valueDim, outDim := cfg.Heads, cfg.KeyDim, cfg.QueryDim, cfg.ValueDim, cfg.OutDim
	if heads <= 0 || keyDim <= 0 || queryDim <= 0 || valueDim <= 0 || outDim <= 0 {
		return nil, fmt.Errorf("layers: multi-head attention %q: heads=%d key_dim=%d query=%d value=%d out=%d must be positive", name, heads, keyDim, queryDim, valueDim, outDim)
	}
	c := newConfig(opts)
	m := &MultiHeadAttention{Heads: heads, KeyDim: keyDim}
	for _, p := range []struct {
		w, b  **graph.Param
		sub   string
		shape []int
		bias  []int
	}{
		{&m.WQ, &m.BQ, "query", []int{queryDim, heads, keyDim}, []int{heads, keyDim}},
		{&m.WK, &m.BK, "key", []int{valueDim, heads, keyDim}, []int{heads, keyDim}},
		{&m.WV, &m.BV, "value", []int{valueDim, heads, keyDim}, []int{heads, keyDim}},
		{&m.WO, &m.BO, "attention_output", []int{heads, keyDim, outDim}, []int{outDim}},
	} {
		w, err := initializer.GlorotUniformKeras(rng, c.dtype, p.shape...)
		if err != nil {
			return nil, fmt.Errorf("layers: multi-head attention %q: %w", name, err)
		}
		*p.w = graph.NewParam(name+"/"+p.sub+"/kernel", w)
		*p.b = graph.NewParam(name+"/"+p.sub+"/bias", tensor.Zeros(c.dtype, p.bias...))
	}
	return m, nil
}

// project maps x [B, T, D] to [B, heads, T, key_dim].
func (m *MultiHeadAttention) project(x *graph.Value, w, b *graph.Param) *graph.Value {
	t, hk := x.Tape(), m.Heads*m.KeyDim
	y := graph.Linear(x, graph.Reshape(t.Param(w), -1, hk), graph.Reshape(t.Param(b), hk))
	s := y.Shape()
	if s == nil {
		return y
	}
	return graph.Transpose(graph.Reshape(y, s[0], s[1], m.Heads, m.KeyDim), 0, 2, 1, 3)
}

// Forward attends from query [B, Tq, Dq] over key [B, Tk, Dv] (nil: value
// is the key, Keras' default) and value [B, Tk, Dv] and returns [B, Tq,
// D_out]. a carries the key lengths, causal flag and scale (0: Keras'
// 1/sqrt(key_dim)).
func (m *MultiHeadAttention) Forward(query, key, value *graph.Value, a ops.AttentionAttrs) *graph.Value {
	if key == nil {
		key = value
	}
	q, k, v := m.project(query, m.WQ, m.BQ), m.project(key, m.WK, m.BK), m.project(value, m.WV, m.BV)
	o := graph.Transpose(graph.Attention(q, k, v, nil, a), 0, 2, 1, 3) // [B, Tq, heads, key_dim]
	in := firstErr(query, key, value)
	s := o.Shape()
	if s == nil {
		return out("multi-head attention", m, in, o)
	}
	t, hk := query.Tape(), m.Heads*m.KeyDim
	return out("multi-head attention", m, in, graph.Linear(graph.Reshape(o, s[0], s[1], hk), graph.Reshape(t.Param(m.WO), hk, -1), t.Param(m.BO)))
}

// Params returns the kernels and biases.
func (m *MultiHeadAttention) Params() []*graph.Param {
	return []*graph.Param{m.WQ, m.BQ, m.WK, m.BK, m.WV, m.BV, m.WO, m.BO}
}

// BahdanauAttention is additive attention for seq2seq (Bahdanau et al.
// 2015; TF's BahdanauAttention without normalisation): score(q, k_j) =
// v·tanh(W1·q + W2·k_j) over a memory's steps, masked to each source's
// length, and context = Σ_j softmax(score)_j·values_j
// (ops.AdditiveAttentionOp). W1 [query, units] and W2 [memory, units] are
// Glorot-uniform without bias, v [units] Glorot-uniform too.
type BahdanauAttention struct {
	WQuery, WMemory, V *graph.Param
}

// BahdanauAttentionConfig shapes a BahdanauAttention: queries of
// QueryDim features, a memory of MemoryDim features, Units in the score's
// hidden layer.
type BahdanauAttentionConfig struct {
	QueryDim, MemoryDim, Units int
}

// NewBahdanauAttention returns the layer shaped by cfg; parameters are
// named name/query_kernel, name/memory_kernel and name/attention_v.
func NewBahdanauAttention(name string, cfg BahdanauAttentionConfig, rng *rand.Rand, opts ...Option) (*BahdanauAttention, error) {
	queryDim, memoryDim, units := cfg.QueryDim, cfg.MemoryDim, cfg.Units
	if queryDim <= 0 || memoryDim <= 0 || units <= 0 {
		return nil, fmt.Errorf("layers: bahdanau attention %q: sizes query=%d memory=%d units=%d must be positive", name, queryDim, memoryDim, units)
	}
	c := newConfig(opts)
	wq, err := initializer.GlorotUniform(rng, c.dtype, queryDim, units)
	if err != nil {
		return nil, err
	}
	wm, err := initializer.GlorotUniform(rng, c.dtype, memoryDim, units)
	if err != nil {
		return nil, err
	}
	v, err := initializer.GlorotUniform(rng, c.dtype, units)
	if err != nil {
		return nil, err
	}
	return &BahdanauAttention{graph.NewParam(name+"/query_kernel", wq), graph.NewParam(name+"/memory_kernel", wm), graph.NewParam(name+"/attention_v", v)}, nil
}

// Memory is what a decoder attends over: the encoder outputs padded to
// Values [B, T, D], their projections Keys [B, T, units] (W2·values,
// computed once per source batch) and each source's length.
type Memory struct {
	Keys, Values *graph.Value
	Lengths      []int
	// origin[i] is the row of the memory as built that row i holds (nil:
	// row i itself), so that Select can tell when a reordering leaves
	// every row's content as it was.
	origin []int
}

// Memory pads the encoder outputs enc (a ragged batch [total, D]) and
// projects them once.
func (a *BahdanauAttention) Memory(enc graph.Seq) Memory {
	vals, lengths := graph.PadSeq(enc)
	return Memory{Keys: graph.Linear(vals, enc.Values.Tape().Param(a.WMemory), nil), Values: vals, Lengths: lengths}
}

// Select returns the memory of the batch rows rows (in that order, repeats
// allowed): how beam search tiles a source over its beams or reorders them.
// When every selected row holds what row i already holds (a beam search
// reordering hypotheses within each source after the first step), it
// returns m itself and copies nothing.
func (m Memory) Select(rows []int) Memory {
	idx, lengths, origin := make([]int64, len(rows)), make([]int, len(rows)), make([]int, len(rows))
	same := len(rows) == len(m.Lengths)
	for i, r := range rows {
		if r < 0 || r >= len(m.Lengths) {
			v := m.Keys.Tape().Fail(fmt.Errorf("layers: Memory.Select row %d of a batch of %d", r, len(m.Lengths)))
			return Memory{Keys: v, Values: v, Lengths: m.Lengths}
		}
		idx[i], lengths[i], origin[i] = int64(r), m.Lengths[r], m.originOf(r)
		same = same && origin[i] == m.originOf(i)
	}
	if same {
		return m
	}
	ix := tensor.MustFromSlice(idx, len(idx))
	if dev := m.Keys.Device(); dev != nil { // the indices go where the memory is
		t := m.Keys.Tape()
		var err error
		if ix, err = t.Move(ix, dev); err != nil {
			v := t.Fail(fmt.Errorf("layers: Memory.Select: %w", err))
			return Memory{Keys: v, Values: v, Lengths: m.Lengths}
		}
	}
	return Memory{Keys: graph.Gather(m.Keys, ix, 0), Values: graph.Gather(m.Values, ix, 0), Lengths: lengths, origin: origin}
}

// Head returns the memory of the first n batch rows: how a decoder whose
// batch is sorted by target length, longest first, drops the sequences
// that have ended (PyTorch's packed sequences shrink the batch the same
// way).
func (m Memory) Head(n int) Memory {
	if n == len(m.Lengths) {
		return m
	}
	if n < 0 || n > len(m.Lengths) {
		v := m.Keys.Tape().Fail(fmt.Errorf("layers: Memory.Head of %d rows of a batch of %d", n, len(m.Lengths)))
		return Memory{Keys: v, Values: v, Lengths: m.Lengths}
	}
	h := Memory{Keys: graph.Slice(m.Keys, 0, 0, n), Values: graph.Slice(m.Values, 0, 0, n), Lengths: m.Lengths[:n:n]}
	if m.origin != nil {
		h.origin = m.origin[:n:n]
	}
	return h
}

// originOf returns the row of the memory as built that row r holds.
func (m Memory) originOf(r int) int {
	if m.origin == nil {
		return r
	}
	return m.origin[r]
}

// Attend returns the context [B, D] for queries [B, query].
func (a *BahdanauAttention) Attend(query *graph.Value, m Memory) *graph.Value {
	t := query.Tape()
	pq := graph.Linear(query, t.Param(a.WQuery), nil)
	s := pq.Shape()
	if s == nil {
		return out("bahdanau attention", a, firstErr(query, m.Keys, m.Values), pq)
	}
	ctx := graph.AdditiveAttention(graph.Reshape(pq, s[0], 1, s[1]), m.Keys, t.Param(a.V), m.Values, nil, ops.AttentionAttrs{KeyLengths: m.Lengths})
	return out("bahdanau attention", a, firstErr(query, m.Keys, m.Values), graph.Reshape(ctx, s[0], -1))
}

// Params returns W1, W2 and v.
func (a *BahdanauAttention) Params() []*graph.Param {
	return []*graph.Param{a.WQuery, a.WMemory, a.V}
}

// AttentionDecoder is a seq2seq decoder with Bahdanau attention and input
// feeding (Luong et al. 2015): each step runs an LSTM cell on
// [x_t, context_{t-1}], attends with the new h over the encoder memory and
// predicts out = [h_t, context_t]·Wout + bout.
type AttentionDecoder struct {
	Cell LSTMParams // kernel [in + memory, 4H], Keras LSTM initialisers
	Attn *BahdanauAttention
	Out  *Linear
}

// DecoderState is the decoder's state between steps, every value [B, ...].
type DecoderState struct {
	LSTM    graph.LSTMState
	Context *graph.Value
}

// Select returns the state of the batch rows rows, in that order (beam search).
func (s DecoderState) Select(rows []int) DecoderState {
	idx := make([]int64, len(rows))
	for i, r := range rows {
		idx[i] = int64(r)
	}
	ix := tensor.MustFromSlice(idx, len(idx))
	return DecoderState{graph.LSTMState{H: graph.Gather(s.LSTM.H, ix, 0), C: graph.Gather(s.LSTM.C, ix, 0)}, graph.Gather(s.Context, ix, 0)}
}

// AttentionDecoderConfig shapes an AttentionDecoder: In features per step
// (a target embedding), a memory of MemoryDim features attended with
// AttnUnits, Hidden LSTM units and Out outputs (logits).
type AttentionDecoderConfig struct {
	In, MemoryDim, Hidden, AttnUnits, Out int
}

// NewAttentionDecoder returns the decoder shaped by cfg; parameters are
// named name/cell/..., name/attention/... and name/output/....
func NewAttentionDecoder(name string, cfg AttentionDecoderConfig, rng *rand.Rand, opts ...Option) (*AttentionDecoder, error) {
	in, memoryDim, hidden, attnUnits, out := cfg.In, cfg.MemoryDim, cfg.Hidden, cfg.AttnUnits, cfg.Out
	if in <= 0 || memoryDim <= 0 || hidden <= 0 || attnUnits <= 0 || out <= 0 {
		return nil, fmt.Errorf("layers: attention decoder %q: sizes in=%d memory=%d hidden=%d attention=%d out=%d must be positive", name, in, memoryDim, hidden, attnUnits, out)
	}
	c := newConfig(opts)
	cell, err := newLSTMParams(name+"/cell", in+memoryDim, hidden, false, rng, c.dtype)
	if err != nil {
		return nil, err
	}
	attn, err := NewBahdanauAttention(name+"/attention", BahdanauAttentionConfig{QueryDim: hidden, MemoryDim: memoryDim, Units: attnUnits}, rng, opts...)
	if err != nil {
		return nil, err
	}
	o, err := NewLinear(name+"/output", hidden+memoryDim, out, rng, opts...)
	if err != nil {
		return nil, err
	}
	return &AttentionDecoder{Cell: cell, Attn: attn, Out: o}, nil
}

// check reports a decoder without its parameters (a zero AttentionDecoder{}).
func (d *AttentionDecoder) check() error {
	if d.Attn == nil || d.Out == nil || d.Cell.W == nil || d.Cell.U == nil || d.Cell.B == nil || d.Cell.U.Value == nil {
		return errors.New("layers: attention decoder without its parameters (build it with NewAttentionDecoder)")
	}
	return nil
}

// Start returns the first state: init (nil for zeros, or an encoder's
// final state [B, H]) and a zero context.
func (d *AttentionDecoder) Start(m Memory, init *graph.LSTMState) DecoderState {
	t := m.Values.Tape()
	if err := d.check(); err != nil {
		v := t.Fail(err)
		return DecoderState{graph.LSTMState{H: v, C: v}, v}
	}
	s := m.Values.Shape()
	if s == nil {
		v := failedOr(m.Values, "attention decoder: memory")
		return DecoderState{graph.LSTMState{H: v, C: v}, v}
	}
	dt, h := m.Values.DType(), d.Cell.U.Value.Dim(0)
	st := DecoderState{Context: t.Const(tensor.Zeros(dt, s[0], s[2]))}
	if init != nil {
		st.LSTM = *init
	} else {
		st.LSTM = graph.LSTMState{H: t.Const(tensor.Zeros(dt, s[0], h)), C: t.Const(tensor.Zeros(dt, s[0], h))}
	}
	return st
}

// Step runs one decoder step on x [B, in] and returns the logits [B, out]
// and the next state. Beam search calls it once per step on the B·beam
// rows, reordering states and memory with Select.
func (d *AttentionDecoder) Step(x *graph.Value, s DecoderState, m Memory) (*graph.Value, DecoderState) {
	if err := d.check(); err != nil {
		v := x.Tape().Fail(err)
		return v, DecoderState{graph.LSTMState{H: v, C: v}, v}
	}
	feat, next := d.advance(x, s, m)
	return d.Out.Forward(feat), next
}

// advance runs the cell and the attention for one step and returns the
// output layer's input [h, context] and the next state.
func (d *AttentionDecoder) advance(x *graph.Value, s DecoderState, m Memory) (*graph.Value, DecoderState) {
	if err := d.check(); err != nil {
		v := x.Tape().Fail(err)
		return v, DecoderState{graph.LSTMState{H: v, C: v}, v}
	}
	st := graph.LSTMCell(graph.Concat(1, x, s.Context), s.LSTM, d.Cell.Weights(x.Tape()))
	st.H = out("attention decoder cell", d.Cell, firstErr(x, s.Context, s.LSTM.H, s.LSTM.C), st.H)
	ctx := d.Attn.Attend(st.H, m)
	return graph.Concat(1, st.H, ctx), DecoderState{st, ctx}
}

// Decode runs the decoder with teacher forcing over inputs [B, T, in] (the
// embedded target sequence shifted right) and returns the logits [B, T,
// out]. The steps run the cell and the attention; the output layer runs
// once, over the features [h_t, context_t] of all steps together (one
// [B·T, hidden+memory] × [hidden+memory, out] product instead of T small
// ones).
func (d *AttentionDecoder) Decode(inputs *graph.Value, m Memory, init *graph.LSTMState) *graph.Value {
	feats := d.features(inputs, m, init)
	if feats.Err() != nil {
		return feats
	}
	return d.Out.Forward(feats)
}

// DecodeSeq is Decode over a ragged batch of inputs [total, in] (each
// target sequence shifted right, of its own length): every sequence runs
// to the batch's longest, and the logits of each sequence's own steps come
// back as a ragged batch [total, out] with the inputs' offsets; the output
// layer runs only on those rows.
func (d *AttentionDecoder) DecodeSeq(inputs graph.Seq, m Memory, init *graph.LSTMState) graph.Seq {
	padded, lengths := graph.PadSeq(inputs)
	feats := d.features(padded, m, init)
	sh := feats.Shape()
	if feats.Err() != nil || len(sh) != 3 {
		return inputs.With(noTape("attention decoder", feats))
	}
	rows := make([]int64, 0, inputs.Values.Shape()[0])
	for b, n := range lengths {
		for t := range n {
			rows = append(rows, int64(b*sh[1]+t))
		}
	}
	flat := graph.Reshape(feats, sh[0]*sh[1], sh[2])
	real := graph.Gather(flat, tensor.MustFromSlice(rows, len(rows)), 0)
	return inputs.With(d.Out.Forward(real))
}

// features runs the decoder steps over inputs [B, T, in] and returns each
// step's [h_t, context_t], [B, T, hidden+memory].
func (d *AttentionDecoder) features(inputs *graph.Value, m Memory, init *graph.LSTMState) *graph.Value {
	sh := inputs.Shape()
	if sh == nil || len(sh) != 3 {
		if sh != nil {
			return inputs.Tape().Fail(fmt.Errorf("layers: attention decoder: inputs of shape %v; want [B, T, in]", sh))
		}
		return noTape("attention decoder", inputs)
	}
	s := d.Start(m, init)
	feats := make([]*graph.Value, sh[1])
	for t := range feats {
		feats[t], s = d.advance(graph.Reshape(graph.Slice(inputs, 1, t, t+1), sh[0], sh[2]), s, m)
	}
	return graph.Stack(1, feats...)
}

// Params returns the cell's, the attention's and the output layer's parameters.
func (d *AttentionDecoder) Params() []*graph.Param {
	return Params(d.Cell, d.Attn, d.Out)
}
