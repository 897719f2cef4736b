// Package word2vec is the PaddlePaddle book's chapter 4 ("Word2Vec"): the
// N-gram neural language model of Bengio et al. (2003) on Mikolov's Penn
// Treebank text. The four words before a position go through one shared
// 32-wide embedding table, are concatenated, pass an fc layer of 256
// sigmoid units and a softmax over the dictionary, which predicts the
// fifth word. The trained table holds the word vectors that Similar
// queries.
package word2vec

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// The book's sizes (04.word2vec/train.py): N-grams of 5 words, embeddings
// of 32, a hidden layer of 256.
const (
	N      = 5
	Embed  = 32
	Hidden = 256
)

// Model is the N-gram language model.
type Model struct {
	Vocab  int
	Emb    *layers.Embedding // the shared table [Vocab, Embed] (Paddle's "shared_w")
	Hidden *layers.Linear    // [(N-1)·Embed, Hidden], sigmoid
	Out    *layers.Linear    // [Hidden, Vocab], softmax in the loss
}

// New returns the model for a dictionary of vocab words. The table is
// uniform in ±0.05 and the fc kernels Glorot-uniform with zero biases,
// which is Fluid's Xavier default for both up to the table's bound
// (±0.053 for 2,074 words).
func New(vocab int, rng *rand.Rand, opts ...layers.Option) (*Model, error) {
	if vocab < 2 {
		return nil, fmt.Errorf("word2vec: a dictionary of %d words, want at least 2", vocab)
	}
	emb, err := layers.NewEmbedding("word2vec/emb", layers.EmbeddingConfig{Vocab: vocab, Dim: Embed}, rng, opts...)
	if err != nil {
		return nil, err
	}
	hid, err := layers.NewLinear("word2vec/hidden", (N-1)*Embed, Hidden, rng, opts...)
	if err != nil {
		return nil, err
	}
	out, err := layers.NewLinear("word2vec/out", Hidden, vocab, rng, opts...)
	if err != nil {
		return nil, err
	}
	return &Model{Vocab: vocab, Emb: emb, Hidden: hid, Out: out}, nil
}

// built reports whether m has the layers New makes.
func (m *Model) built() bool {
	return m != nil && m.Emb != nil && m.Emb.Table != nil && m.Emb.Table.Value != nil && m.Hidden != nil && m.Out != nil
}

func errNotBuilt(fn string) error {
	return fmt.Errorf("word2vec: %s: a nil model or one not built by New", fn)
}

// Params returns the table and both fc layers' parameters; nil for a model
// not built by New.
func (m *Model) Params() []*graph.Param {
	if !m.built() {
		return nil
	}
	return layers.Params(m.Emb, m.Hidden, m.Out)
}

// Logits maps context ids [B, N-1] (int64) to next-word logits [B, Vocab].
// The four lookups of the book are one lookup of the [B, 4] ids, whose
// [B, 4, 32] result laid out as [B, 128] is the concatenation of the four
// embeddings in order.
func (m *Model) Logits(t *graph.Tape, context *tensor.Tensor) *graph.Value {
	if !m.built() {
		return t.Fail(errNotBuilt("Model.Logits"))
	}
	if context == nil || context.Rank() != 2 || context.Dim(1) != N-1 {
		return t.Fail(fmt.Errorf("word2vec: context %v, want [batch, %d] word ids", shapeOf(context), N-1))
	}
	e := m.Emb.Lookup(t, context)
	x := graph.Reshape(e, context.Dim(0), (N-1)*Embed)
	h := graph.Sigmoid(m.Hidden.Forward(x))
	return m.Out.Forward(h)
}

// Loss is the batch's mean cross-entropy of the next word (the book's
// cross_entropy over the softmax, then mean). The ids are where the
// model's parameters are (the trainer moves a batch there,
// train.Config.Device).
func (m *Model) Loss(t *graph.Tape, context, next *tensor.Tensor) *graph.Value {
	return graph.SoftmaxCrossEntropy(m.Logits(t, context), next)
}

func shapeOf(t *tensor.Tensor) any {
	if t == nil {
		return "nil"
	}
	return t.Shape()
}

// Neighbour is a word and its score against a query.
type Neighbour struct {
	ID    int
	Score float64
}

// Similar returns the k words whose embeddings have the largest dot
// product with word id's (the book's nearest-neighbour query on the
// trained table), best first, the word itself left out; ties go to the
// lower id.
func (m *Model) Similar(id, k int) ([]Neighbour, error) {
	if !m.built() {
		return nil, errNotBuilt("similar")
	}
	table := m.Emb.Table.Value
	vocab, dim := table.Dim(0), table.Dim(1)
	if id < 0 || id >= vocab {
		return nil, fmt.Errorf("word2vec: similar: word id %d outside the dictionary [0, %d)", id, vocab)
	}
	if k < 1 {
		return nil, fmt.Errorf("word2vec: similar: k=%d, want at least 1", k)
	}
	row := func(i int) []float64 {
		r := make([]float64, dim)
		for j := range r {
			r[j] = table.At(i*dim + j)
		}
		return r
	}
	q := row(id)
	out := make([]Neighbour, 0, vocab-1)
	for i := range vocab {
		if i == id {
			continue
		}
		s := 0.0
		for j, v := range row(i) {
			s += v * q[j]
		}
		out = append(out, Neighbour{ID: i, Score: s})
	}
	slices.SortStableFunc(out, func(a, b Neighbour) int { return cmp.Compare(b.Score, a.Score) })
	return out[:min(k, len(out))], nil
}
