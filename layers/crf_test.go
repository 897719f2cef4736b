package layers

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// tagGrammar draws n sentences over the words a, b, c (0, 1, 2) with BIO
// tags O, B, I (0, 1, 2): a is O, b is B, and c is I after B or I but B
// after O or at the start, since I must follow B or I. A word alone does
// not give c's tag; the tag before it does, which only the CRF's
// transitions and start weights can learn.
func tagGrammar(rng *rand.Rand, n int) (words, tags *tensor.Tensor, offsets []int) {
	var w, g []int64
	offsets = []int{0}
	for i := range n {
		length := []int{0, 1}[i%2]
		if i >= 2 {
			length = 2 + rng.IntN(7)
		}
		for t := range length {
			word := int64(rng.IntN(3))
			tag := word // a→O, b→B
			if word == 2 && (t == 0 || g[len(g)-1] == 0) {
				tag = 1
			}
			w, g = append(w, word), append(g, tag)
		}
		offsets = append(offsets, len(w))
	}
	return tensor.MustFromSlice(w, len(w)), tensor.MustFromSlice(g, len(g)), offsets
}

// A CRF over Embedding+Linear emissions learns the BIO grammar and Viterbi
// decodes held-out sentences (lengths 0, 1 and longer) exactly.
func TestCRFLearnsTagGrammar(t *testing.T) {
	rng := tensor.NewRNG(7)
	emb, err := NewEmbedding("emb", EmbeddingConfig{Vocab: 3, Dim: 8}, rng)
	require.NoError(t, err)
	fc, err := NewLinear("fc", 8, 3, rng)
	require.NoError(t, err)
	crf, err := NewCRF("crf", 3, rng)
	require.NoError(t, err)
	params := append(append(emb.Params(), fc.Params()...), crf.Params()...)
	opt, err := optim.NewAdam(params, optim.LR(0.05))
	require.NoError(t, err)
	emissions := func(tape *graph.Tape, words *tensor.Tensor, off []int) graph.Seq {
		return graph.NewSeq(fc.Forward(emb.Lookup(tape, words)), off)
	}

	words, tags, off := tagGrammar(rng, 200)
	var first, last float64
	for step := range 150 {
		tape := graph.NewTape()
		loss := graph.Mean(crf.NegLogLikelihood(emissions(tape, words, off), tags))
		require.NoError(t, tape.Backward(loss))
		require.NoError(t, opt.Step())
		last, _ = loss.Item()
		if step == 0 {
			first = last
		}
	}
	require.Less(t, last, first/10, "training loss %v -> %v", first, last)

	words, tags, off = tagGrammar(rng, 60)
	paths, _, err := crf.Decode(emissions(graph.NewEvalTape(), words, off))
	require.NoError(t, err)
	gold, _ := tags.Ints()
	for b, p := range paths {
		require.Equal(t, gold[off[b]:off[b+1]], p, "sentence %d", b)
	}
}

func TestCRFLayerErrors(t *testing.T) {
	_, err := NewCRF("crf", 0, tensor.NewRNG(1))
	require.ErrorContains(t, err, `layers: crf "crf": 0 tags`)
	crf, err := NewCRF("crf", 3, tensor.NewRNG(1))
	require.NoError(t, err)
	require.Len(t, crf.Params(), 3)
	tape := graph.NewTape()
	s := graph.NewSeq(tape.Const(tensor.Zeros(tensor.Float32, 2, 3)), []int{0, 2})
	_, err = crf.NegLogLikelihood(s, tensor.MustFromSlice([]int64{0, 3}, 2)).Tensor()
	require.ErrorContains(t, err, "crf: inputs float32[2 3], float32[3 3], float32[3], float32[3], int64[2]: tag 3 at step 1 out of range [0, 3)")
	_, _, err = crf.Decode(graph.Seq{Values: tape.Const(tensor.Zeros(tensor.Float32, 2, 4)), Offsets: []int{0, 2}})
	require.ErrorContains(t, err, "viterbi_decode: inputs float32[2 4], float32[3 3], float32[3], float32[3]: want transitions [4 4]")
	_, _, err = crf.Decode(graph.Seq{})
	require.ErrorContains(t, err, "nil values")
	require.ErrorContains(t, crf.NegLogLikelihood(graph.Seq{}, nil).Err(), "crf")
}
