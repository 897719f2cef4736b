package layers

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

func TestRNNLayersShapesAndInit(t *testing.T) {
	rng := tensor.NewRNG(1)
	l, err := NewLSTM("enc", RNNConfig{In: 3, Units: 4, Layers: 2, Bidirectional: true, Peepholes: true}, rng)
	require.NoError(t, err)
	require.Len(t, l.Params(), 2*2*4)
	require.Equal(t, "enc/l1/bw/recurrent_kernel", l.W[1][1].U.Name)
	require.Equal(t, tensor.Shape{8, 16}, l.W[1][0].W.Value.Shape())
	for k := 0; k < 16; k++ { // unit_forget_bias: block f is 1
		require.Equal(t, float64(b2i(k >= 4 && k < 8)), l.W[0][0].B.Value.At(k))
	}
	g, err := NewGRU("g", RNNConfig{In: 3, Units: 4, Layers: 2, Bidirectional: true, ResetAfter: true}, rng)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 12}, g.W[0][0].B.Value.Shape())

	tape := graph.NewTape()
	x := graph.Seq{Values: tape.Const(randn32(2, 6, 3)), Offsets: []int{0, 4, 4, 5, 6}}
	for _, got := range []struct {
		v     *graph.Value
		shape tensor.Shape
	}{{l.Forward(x).Values, tensor.Shape{6, 8}}, {l.Final(x), tensor.Shape{4, 8}}, {g.Forward(x).Values, tensor.Shape{6, 8}}, {g.Final(x), tensor.Shape{4, 8}}} {
		v, err := got.v.Tensor()
		require.NoError(t, err)
		require.Equal(t, got.shape, v.Shape())
	}
	_, fs := l.Run(x, make([]graph.LSTMState, 3))
	require.ErrorContains(t, fs[0].H.Err(), "3 initial states for 4 layers × directions")
	_, err = NewLSTM("bad", RNNConfig{In: 0, Units: 4}, rng)
	require.ErrorContains(t, err, `lstm "bad"`)
	_, err = NewGRU("bad", RNNConfig{In: 3, Units: 4, Layers: -1}, rng)
	require.ErrorContains(t, err, `gru "bad"`)
	bad := graph.Seq{Values: tape.Const(randn32(3, 6, 2)), Offsets: []int{0, 6}}
	require.ErrorContains(t, l.Final(bad).Err(), "lstm: inputs float32[6 2], float32[3 16]")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func randn32(seed uint64, shape ...int) *tensor.Tensor {
	t, _ := randn(seed, shape...).Cast(tensor.Float32)
	return t
}

// An LSTM learns to count the ones in a bit sequence of length 1 to 6
// from its final state.
func TestLSTMLearnsToCount(t *testing.T) {
	rng := tensor.NewRNG(7)
	lstm, err := NewLSTM("lstm", RNNConfig{In: 2, Units: 16}, rng)
	require.NoError(t, err)
	head, err := NewLinear("head", 16, 7, rng)
	require.NoError(t, err)
	params := append(lstm.Params(), head.Params()...)
	opt, err := optim.NewAdam(params, optim.LR(0.02))
	require.NoError(t, err)
	data := tensor.NewRNG(8)
	batch := func(n int) (*tensor.Ragged, *tensor.Tensor) {
		lengths := make([]int, n)
		labels := make([]int32, n)
		var bits []float32
		for i := range lengths {
			lengths[i] = 1 + data.IntN(6)
			for range lengths[i] {
				b := data.IntN(2)
				labels[i] += int32(b)
				bits = append(bits, float32(1-b), float32(b)) // one-hot
			}
		}
		off, err := tensor.OffsetsFromLengths(lengths)
		require.NoError(t, err)
		r, err := tensor.NewRagged(tensor.MustFromSlice(bits, len(bits)/2, 2), off)
		require.NoError(t, err)
		return r, tensor.MustFromSlice(labels, n)
	}
	for range 250 {
		x, y := batch(32)
		tape := graph.NewTape()
		loss := graph.SoftmaxCrossEntropy(head.Forward(lstm.Final(tape.ConstSeq(x))), y)
		require.NoError(t, tape.Backward(loss))
		require.NoError(t, opt.Step())
	}
	x, y := batch(200)
	tape := graph.NewEvalTape()
	logits, err := head.Forward(lstm.Final(tape.ConstSeq(x))).Tensor()
	require.NoError(t, err)
	a, err := ops.Accuracy(logits, y)
	require.NoError(t, err)
	require.Greater(t, a, 0.9)
}

// An encoder LSTM and an attention decoder learn to copy a token sequence
// (teacher forcing).
func TestAttentionDecoderLearnsToCopy(t *testing.T) {
	const vocab, steps, hid = 5, 4, 24
	rng := tensor.NewRNG(3)
	enc, err := NewLSTM("enc", RNNConfig{In: vocab, Units: hid}, rng)
	require.NoError(t, err)
	dec, err := NewAttentionDecoder("dec", AttentionDecoderConfig{In: vocab + 1, MemoryDim: hid, Hidden: hid, AttnUnits: hid, Out: vocab}, rng)
	require.NoError(t, err)
	opt, err := optim.NewAdam(append(enc.Params(), dec.Params()...), optim.LR(0.01))
	require.NoError(t, err)
	data := tensor.NewRNG(4)
	batch := func(n int) (src *tensor.Ragged, in, labels *tensor.Tensor) {
		toks := make([]int, n*steps)
		oneHot := tensor.Zeros(tensor.Float32, n*steps, vocab)
		in = tensor.Zeros(tensor.Float32, n, steps, vocab+1)
		labels = tensor.Zeros(tensor.Int32, n*steps)
		for i := range toks {
			toks[i] = data.IntN(vocab)
			oneHot.SetAt(i*vocab+toks[i], 1)
			labels.SetAt(i, float64(toks[i]))
			b, s := i/steps, i%steps
			prev := vocab // start symbol
			if s > 0 {
				prev = toks[i-1]
			}
			in.SetAt((b*steps+s)*(vocab+1)+prev, 1)
		}
		off, _ := tensor.OffsetsFromLengths(repeat(steps, n))
		src, err := tensor.NewRagged(oneHot, off)
		require.NoError(t, err)
		return src, in, labels
	}
	run := func(tape *graph.Tape, src *tensor.Ragged, in *tensor.Tensor) *graph.Value {
		outs, finals := enc.Run(tape.ConstSeq(src), nil)
		logits := dec.Decode(tape.Const(in), dec.Attn.Memory(outs), &finals[0])
		return graph.Reshape(logits, -1, vocab)
	}
	for range 300 {
		src, in, y := batch(32)
		tape := graph.NewTape()
		require.NoError(t, tape.Backward(graph.SoftmaxCrossEntropy(run(tape, src, in), y)))
		require.NoError(t, opt.Step())
	}
	src, in, y := batch(100)
	logits, err := run(graph.NewEvalTape(), src, in).Tensor()
	require.NoError(t, err)
	a, err := ops.Accuracy(logits, y)
	require.NoError(t, err)
	require.Greater(t, a, 0.9)
}

func repeat(v, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// Multi-head attention over a padded batch with key lengths gives, at every
// query, what each sequence gives alone.
func TestMultiHeadAttentionPaddedEqualsAlone(t *testing.T) {
	m, err := NewMultiHeadAttention("mha", MultiHeadAttentionConfig{Heads: 2, KeyDim: 3, QueryDim: 4, ValueDim: 5, OutDim: 6}, tensor.NewRNG(1), DType(tensor.Float64))
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{4, 2, 3}, m.WQ.Value.Shape())
	require.Equal(t, tensor.Shape{2, 3, 6}, m.WO.Value.Shape())
	q, kv := randn(1, 2, 3, 4), randn(2, 2, 5, 5)
	lengths := []int{5, 2}
	tape := graph.NewEvalTape()
	got, err := m.Forward(tape.Const(q), nil, tape.Const(kv), ops.AttentionAttrs{KeyLengths: lengths}).Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 3, 6}, got.Shape())
	for b, l := range lengths {
		qb, _ := q.Slice(0, b, b+1)
		kb, _ := kv.Slice(0, b, b+1)
		kb, _ = kb.Slice(1, 0, l)
		want, err := m.Forward(tape.Const(qb), tape.Const(kb), tape.Const(kb), ops.AttentionAttrs{}).Tensor()
		require.NoError(t, err)
		gb, _ := got.Slice(0, b, b+1)
		for i := range want.Size() {
			require.InDelta(t, want.At(i), gb.At(i), 1e-12*(1+math.Abs(want.At(i))))
		}
	}
	require.ErrorContains(t, m.Forward(tape.Const(q), nil, tape.Const(randn(3, 2, 5, 4)), ops.AttentionAttrs{}).Err(), "linear")
	_, err = NewMultiHeadAttention("bad", MultiHeadAttentionConfig{Heads: 0, KeyDim: 3, QueryDim: 4, ValueDim: 5, OutDim: 6}, tensor.NewRNG(1))
	require.ErrorContains(t, err, `multi-head attention "bad"`)
}

// The layer passes its activations to the op, forward and reverse.
func TestLSTMLayerActivations(t *testing.T) {
	rng := tensor.NewRNG(3)
	cfg := RNNConfig{In: 3, Units: 2, Bidirectional: true, Peepholes: true, Candidate: ops.ActRelu, Cell: ops.ActSigmoid}
	l, err := NewLSTM("srl", cfg, rng, DType(tensor.Float64))
	require.NoError(t, err)
	x, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, 5, 3)
	require.NoError(t, err)
	off := []int{0, 2, 5}
	r, err := tensor.NewRagged(x, off)
	require.NoError(t, err)
	got, err := l.Forward(graph.NewTape().ConstSeq(r)).Values.Tensor()
	require.NoError(t, err)
	for d, p := range l.W[0] {
		hc, err := ops.LSTM(x, p.W.Value, p.U.Value, p.B.Value, p.P.Value, nil, nil,
			ops.LSTMAttrs{Offsets: off, Reverse: d == 1, Candidate: ops.ActRelu, Cell: ops.ActSigmoid})
		require.NoError(t, err)
		for r := range 5 {
			for k := range 2 {
				require.InDelta(t, hc.At(r*4+k), got.At(r*4+d*2+k), 1e-12, "direction %d row %d unit %d", d, r, k)
			}
		}
	}
}

// Decode (one output product over all steps) gives the logits of stepping
// the decoder, and DecodeSeq over a ragged batch gives each sequence's own
// steps of it.
func TestAttentionDecoderDecodeSeq(t *testing.T) {
	rng := tensor.NewRNG(5)
	dec, err := NewAttentionDecoder("dec", AttentionDecoderConfig{In: 3, MemoryDim: 4, Hidden: 5, AttnUnits: 6, Out: 7}, rng, DType(tensor.Float64))
	require.NoError(t, err)
	enc := []int{0, 2, 5}
	encVals, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, 5, 4)
	require.NoError(t, err)
	in := []int{0, 3, 4} // target lengths 3 and 1
	inVals, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, 4, 3)
	require.NoError(t, err)
	tape := graph.NewEvalTape()
	er, err := tensor.NewRagged(encVals, enc)
	require.NoError(t, err)
	mem := dec.Attn.Memory(tape.ConstSeq(er))
	ir, err := tensor.NewRagged(inVals, in)
	require.NoError(t, err)
	got, err := dec.DecodeSeq(tape.ConstSeq(ir), mem, nil).Values.Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{4, 7}, got.Shape())
	padded, _ := graph.PadSeq(tape.ConstSeq(ir))
	all, err := dec.Decode(padded, mem, nil).Tensor()
	require.NoError(t, err)
	s := dec.Start(mem, nil)
	for step := range 3 {
		x := graph.Reshape(graph.Slice(padded, 1, step, step+1), 2, 3)
		var logits *graph.Value
		logits, s = dec.Step(x, s, mem)
		lt, err := logits.Tensor()
		require.NoError(t, err)
		for b := range 2 {
			for k := range 7 {
				require.InDelta(t, lt.At(b*7+k), all.At((b*3+step)*7+k), 1e-12, "Decode vs Step")
				if step < in[b+1]-in[b] {
					require.InDelta(t, lt.At(b*7+k), got.At((in[b]+step)*7+k), 1e-12, "DecodeSeq vs Step")
				}
			}
		}
	}
}

// builtMemory is a float64 attention memory of random encoder outputs [4
// features] over sequences with these offsets.
func builtMemory(t *testing.T, seed uint64, offsets []int) Memory {
	rng := tensor.NewRNG(seed)
	att, err := NewBahdanauAttention("att", BahdanauAttentionConfig{QueryDim: 3, MemoryDim: 4, Units: 5}, rng, DType(tensor.Float64))
	require.NoError(t, err)
	vals, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, offsets[len(offsets)-1], 4)
	require.NoError(t, err)
	enc, err := tensor.NewRagged(vals, offsets)
	require.NoError(t, err)
	return att.Memory(graph.NewEvalTape().ConstSeq(enc))
}

// Memory.Select gathers rows, and returns the memory itself, copying
// nothing, when a reordering leaves every row holding what it held (beam
// search moving hypotheses within a source); its result always equals a
// gather from the memory as built.
func TestMemorySelect(t *testing.T) {
	built := builtMemory(t, 6, []int{0, 2, 5}) // lengths 2 and 3
	for _, tc := range []struct {
		name   string
		steps  [][]int // successive Select calls
		origin []int   // the built rows the last result holds
		reused bool    // the last call returned its input
	}{
		{"identity of the built memory", [][]int{{0, 1}}, []int{0, 1}, true},
		{"tile over beams", [][]int{{0, 0, 0, 1, 1, 1}}, []int{0, 0, 0, 1, 1, 1}, false},
		{"reorder within sources", [][]int{{0, 0, 0, 1, 1, 1}, {2, 0, 0, 5, 3, 4}}, []int{0, 0, 0, 1, 1, 1}, true},
		{"a source drops out", [][]int{{0, 0, 1, 1}, {2, 3}}, []int{1, 1}, false},
		{"rows change source", [][]int{{0, 1}, {1, 0}}, []int{1, 0}, false},
		{"same count, one row moves", [][]int{{0, 0, 1}, {0, 2, 2}}, []int{0, 1, 1}, false},
	} {
		m, prev := built, built
		for _, rows := range tc.steps {
			prev, m = m, m.Select(rows)
		}
		require.Equal(t, tc.reused, m.Keys == prev.Keys && m.Values == prev.Values, tc.name)
		requireSameMemory(t, built.Select(tc.origin), m, tc.name)
	}
	_, err := built.Select([]int{2}).Keys.Tensor()
	require.ErrorContains(t, err, "Memory.Select row 2 of a batch of 2")
}

// requireSameMemory checks that got holds want's lengths, keys and values.
func requireSameMemory(t *testing.T, want, got Memory, name string) {
	t.Helper()
	require.Equal(t, want.Lengths, got.Lengths, name)
	for _, pair := range [][2]*graph.Value{{want.Keys, got.Keys}, {want.Values, got.Values}} {
		w, err := pair[0].Tensor()
		require.NoError(t, err)
		g, err := pair[1].Tensor()
		require.NoError(t, err)
		require.Equal(t, w.Shape(), g.Shape(), name)
		require.Equal(t, w.Float64s(), g.Float64s(), name)
	}
}

// Memory.Head keeps the first rows, as a Select of them would, returns the
// memory itself when it keeps every row, and keeps what each row holds
// for a later Select; a count outside the batch is an error.
func TestMemoryHead(t *testing.T) {
	built := builtMemory(t, 7, []int{0, 2, 5, 6}) // lengths 2, 3 and 1
	require.Equal(t, built, built.Head(3))
	reordered := built.Select([]int{2, 0, 1})
	for _, tc := range []struct {
		name   string
		m      Memory
		n      int
		origin []int
	}{
		{"first two of the built rows", built, 2, []int{0, 1}},
		{"none", built, 0, []int{}},
		{"first of a reordering", reordered, 1, []int{2}},
		{"first two of a reordering", reordered, 2, []int{2, 0}},
	} {
		h := tc.m.Head(tc.n)
		requireSameMemory(t, built.Select(tc.origin), h, tc.name)
		same := make([]int, tc.n)
		for i := range same {
			same[i] = i
		}
		require.Equal(t, h, h.Select(same), "%s: selecting its own rows copies nothing", tc.name)
	}
	for _, n := range []int{-1, 4} {
		_, err := built.Head(n).Keys.Tensor()
		require.ErrorContains(t, err, fmt.Sprintf("Memory.Head of %d rows of a batch of 3", n))
	}
}
