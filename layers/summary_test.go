package layers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// An op error raised inside a layer names the layer (its parameters'
// prefix) besides the op and the shapes; a failed input passes through
// the next layers unchanged, so the error names the layer that failed, not
// the last one.
func TestOpErrorsNameTheLayer(t *testing.T) {
	rng := tensor.NewRNG(1)
	dense1, err := NewLinear("classifier/dense1", 3, 4, rng)
	require.NoError(t, err)
	dense2, err := NewLinear("classifier/dense2", 4, 2, rng)
	require.NoError(t, err)
	conv, err := NewConv2D("stem/conv", Conv2DConfig{In: 3, Out: 2, KH: 3, KW: 3}, rng)
	require.NoError(t, err)
	lstm, err := NewLSTM("encoder", RNNConfig{In: 5, Units: 2}, rng)
	require.NoError(t, err)
	emb, err := NewEmbedding("words", EmbeddingConfig{Vocab: 10, Dim: 4}, rng)
	require.NoError(t, err)
	norm, err := NewLayerNorm("norm", 4)
	require.NoError(t, err)
	attn, err := NewBahdanauAttention("decoder/attention", BahdanauAttentionConfig{QueryDim: 3, MemoryDim: 4, Units: 5}, rng)
	require.NoError(t, err)
	dec, err := NewAttentionDecoder("decoder", AttentionDecoderConfig{In: 2, MemoryDim: 4, Hidden: 3, AttnUnits: 5, Out: 6}, rng)
	require.NoError(t, err)
	crf, err := NewCRF("tagger/crf", 3, rng)
	require.NoError(t, err)
	memory := func(tp *graph.Tape) Memory { // two rows of memory [B=1, T=2, 4]
		return attn.Memory(graph.Seq{Values: tp.Const(tensor.Zeros(tensor.Float32, 2, 4)), Offsets: []int{0, 2}})
	}
	for _, tc := range []struct {
		name string
		run  func(tp *graph.Tape) *graph.Value
		want []string
		not  string
	}{
		{"linear", func(tp *graph.Tape) *graph.Value { return dense1.Forward(tp.Const(tensor.Zeros(tensor.Float32, 2, 5))) },
			[]string{`linear "classifier/dense1"`, "[2 5]"}, ""},
		{"the failing layer, not the last", func(tp *graph.Tape) *graph.Value {
			return Sequential{dense1, dense2}.Forward(tp.Const(tensor.Zeros(tensor.Float32, 2, 5)))
		}, []string{`linear "classifier/dense1"`}, "dense2"},
		{"conv2d", func(tp *graph.Tape) *graph.Value {
			return conv.Forward(tp.Const(tensor.Zeros(tensor.Float32, 1, 1, 8, 8)))
		},
			[]string{`conv2d "stem/conv"`, "conv2d", "[1 1 8 8]"}, ""},
		{"lstm", func(tp *graph.Tape) *graph.Value {
			return lstm.Forward(tp.ConstSeq(&tensor.Ragged{Values: tensor.Zeros(tensor.Float32, 3, 4), Offsets: []int{0, 3}})).Values
		}, []string{`lstm "encoder/l0/fw"`, "[3 4]"}, ""},
		{"embedding", func(tp *graph.Tape) *graph.Value {
			return emb.Lookup(tp, tensor.MustFromSlice([]int64{1, 12}, 2))
		}, []string{`embedding "words"`, "12"}, ""},
		{"layer norm", func(tp *graph.Tape) *graph.Value { return norm.Forward(tp.Const(tensor.Zeros(tensor.Float32, 2, 3))) },
			[]string{`layer norm "norm"`}, ""},
		{"bahdanau attention", func(tp *graph.Tape) *graph.Value {
			return attn.Attend(tp.Const(tensor.Zeros(tensor.Float32, 2, 3)), memory(tp)) // 2 queries, 1 memory row
		}, []string{`bahdanau attention "decoder/attention"`}, ""},
		{"attention decoder", func(tp *graph.Tape) *graph.Value {
			m := dec.Attn.Memory(graph.Seq{Values: tp.Const(tensor.Zeros(tensor.Float32, 2, 4)), Offsets: []int{0, 2}})
			logits, _ := dec.Step(tp.Const(tensor.Zeros(tensor.Float32, 1, 5)), dec.Start(m, nil), m) // input width 5, want 2
			return logits
		}, []string{`attention decoder cell "decoder`}, ""},
		{"crf", func(tp *graph.Tape) *graph.Value {
			e := graph.Seq{Values: tp.Const(tensor.Zeros(tensor.Float32, 2, 3)), Offsets: []int{0, 2}}
			return crf.NegLogLikelihood(e, tensor.MustFromSlice([]int64{0, 7}, 2)) // tag 7 of 3
		}, []string{`crf "tagger/crf"`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp := graph.NewEvalTape()
			defer tp.Release()
			err := tc.run(tp).Err()
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			if tc.not != "" {
				assert.NotContains(t, err.Error(), tc.not)
			}
		})
	}
}

func TestName(t *testing.T) {
	rng := tensor.NewRNG(1)
	l, _ := NewLinear("enc/proj", 2, 2, rng)
	lstm, _ := NewLSTM("enc/lstm", RNNConfig{In: 2, Units: 2, Layers: 2, Bidirectional: true}, rng)
	assert.Equal(t, "enc/proj", Name(l))
	assert.Equal(t, "enc/lstm", Name(lstm))
	assert.Equal(t, "enc", Name(Modules{l, lstm}))
	assert.Equal(t, "", Name(Flatten{}))
	assert.Equal(t, "", Name(nil))
	assert.Equal(t, "", Name((*Linear)(nil)))
}

// Summary lists each layer's output shape and parameters, as Keras's
// model.summary() does for the same network (conv 1→4 3×3: 40 params;
// dense 676→10: 6,770; total 6,810).
func TestSummary(t *testing.T) {
	rng := tensor.NewRNG(1)
	conv, err := NewConv2D("conv", Conv2DConfig{In: 1, Out: 4, KH: 3, KW: 3}, rng)
	require.NoError(t, err)
	bn, err := NewBatchNorm("bn", 4)
	require.NoError(t, err)
	dense, err := NewLinear("dense", 4*13*13, 10, rng)
	require.NoError(t, err)
	drop, err := NewDropout(0.5, rng)
	require.NoError(t, err)
	net := Sequential{conv, bn, Activation(graph.Relu), MaxPool2D{Attrs: ops.Pool2DAttrs{Kernel: [2]int{2, 2}}}, Flatten{}, drop, dense}
	s, err := Summary(net, func(tp *graph.Tape) *graph.Value {
		return net.Forward(tp.Const(tensor.Zeros(tensor.Float32, 1, 1, 28, 28)))
	})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(s), "\n")
	require.Len(t, lines, 10, s)
	fields := func(i int) []string { return strings.Fields(lines[i]) }
	assert.Equal(t, []string{"layer", "kind", "output", "shape", "params"}, fields(0))
	assert.Equal(t, []string{"conv", "conv2d", "[1", "4", "26", "26]", "40"}, fields(1))
	assert.Equal(t, []string{"bn", "batch", "norm", "[1", "4", "26", "26]", "16"}, fields(2))
	assert.Equal(t, []string{"-", "activation", "[1", "4", "26", "26]", "0"}, fields(3))
	assert.Equal(t, []string{"-", "max", "pool", "2d", "[1", "4", "13", "13]", "0"}, fields(4))
	assert.Equal(t, []string{"-", "flatten", "[1", "676]", "0"}, fields(5))
	assert.Equal(t, []string{"-", "dropout", "[1", "676]", "0"}, fields(6))
	assert.Equal(t, []string{"dense", "linear", "[1", "10]", "6770"}, fields(7))
	assert.Equal(t, "output [1 10]", lines[8])
	assert.Equal(t, "total params: 6826 (trainable 6818, non-trainable 8)", lines[9])
}

// A layer run many times (a cell per step) is one row with its count; a
// parameter the pass did not reach is counted apart; a failing pass is an
// error naming the layer.
func TestSummaryCallsAndErrors(t *testing.T) {
	rng := tensor.NewRNG(1)
	cell, _ := NewLinear("cell", 3, 3, rng)
	unused, _ := NewLinear("unused", 3, 1, rng)
	model := Modules{cell, unused}
	s, err := Summary(model, func(tp *graph.Tape) *graph.Value {
		h := tp.Const(tensor.Zeros(tensor.Float32, 2, 3))
		for range 4 {
			h = graph.Tanh(cell.Forward(h))
		}
		return h
	})
	require.NoError(t, err)
	assert.Contains(t, s, "linear ×4")
	assert.Contains(t, s, "total params: 16 (trainable 16, non-trainable 0)")
	assert.Contains(t, s, "params the pass did not reach through a layer above: 4")

	_, err = Summary(model, func(tp *graph.Tape) *graph.Value {
		return cell.Forward(tp.Const(tensor.Zeros(tensor.Float32, 2, 5)))
	})
	assert.ErrorContains(t, err, `linear "cell"`)
	_, err = Summary(nil, nil)
	assert.Error(t, err)
}
