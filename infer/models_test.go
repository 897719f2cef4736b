package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/tensor"
)

// bookModel is one of the five models as a forward pass on example
// inputs.
type bookModel struct {
	name    string
	forward infer.Forward
	inputs  func(seed uint64) []*tensor.Tensor
}

// idsOf returns a batch of id sequences of the given lengths over vocab, as
// the int64 values of a ragged batch.
func idsOf(seed uint64, vocab int, lengths []int) *tensor.Tensor {
	n := 0
	for _, l := range lengths {
		n += l
	}
	rng := tensor.NewRNG(seed)
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(rng.IntN(vocab))
	}
	return tensor.MustFromSlice(v, n)
}

func offsets(lengths []int) []int {
	off := []int{0}
	for _, l := range lengths {
		off = append(off, off[len(off)-1]+l)
	}
	return off
}

// bookModels returns the five models at batch (CIFAR images, sentences of
// a fixed mix of lengths).
func bookModels(t testing.TB, batch int) []bookModel {
	var ms []bookModel
	resnet, err := cifar.New("resnet32", tensor.NewRNG(1))
	require.NoError(t, err)
	ms = append(ms, bookModel{"resnet32", func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return resnet.Forward(tape.Const(in[0]))
	}, func(seed uint64) []*tensor.Tensor { return []*tensor.Tensor{randInput(t, seed, batch, 3, 32, 32)} }})

	lengths := make([]int, batch)
	for i := range lengths {
		lengths[i] = 5 + (7*i)%23
	}
	off := offsets(lengths)
	const vocab = 500
	for _, name := range []string{"cnn", "lstm"} {
		m, err := sentiment.New(name, vocab, tensor.NewRNG(2))
		require.NoError(t, err)
		ms = append(ms, bookModel{"sentiment_" + name, func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return m.Logits(tape, &tensor.Ragged{Values: in[0], Offsets: off})
		}, func(seed uint64) []*tensor.Tensor { return []*tensor.Tensor{idsOf(seed, vocab, lengths)} }})
	}
	tr, err := translate.New(translate.Sizes{Src: vocab, Trg: vocab, Emb: 32, Hidden: 32, Attention: 32}, tensor.NewRNG(3))
	require.NoError(t, err)
	ms = append(ms, bookModel{"translate_encoder", func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return tr.Encode(tape, &tensor.Ragged{Values: in[0], Offsets: off}).H
	}, func(seed uint64) []*tensor.Tensor { return []*tensor.Tensor{idsOf(seed, vocab, lengths)} }})
	return ms
}

// The plans of the five models of issue 34 (ResNet-32, the sentiment text
// CNN and stacked LSTM, the translation encoder's first decoder state; the
// MNIST CNN has its own test) give the eval tape's outputs within 1e-5
// relative, fused and unfused, on inputs other than the traced ones, with
// every step run into the arena (no op falls back to Forward and a copy).
func TestBookModelsMatchEvalTape(t *testing.T) {
	for _, m := range bookModels(t, 3) {
		t.Run(m.name, func(t *testing.T) {
			g, err := infer.Trace(m.forward, m.inputs(1)...)
			require.NoError(t, err)
			x := m.inputs(2)
			want, err := m.forward(graph.NewEvalTape(), x).Tensor()
			require.NoError(t, err)
			for _, opts := range []infer.Options{{NoFusion: true}, {}} {
				p, err := g.Compile(opts)
				require.NoError(t, err)
				require.Empty(t, p.Fallbacks(), "ops without ForwardInto")
				got, err := p.Forward(x...)
				require.NoError(t, err)
				requireClose(t, want, got[0], 1e-5)
			}
		})
	}
}
