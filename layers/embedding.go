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

// Embedding is a lookup table [vocab, dim] (Keras Embedding, Paddle's
// embedding), initialised uniform in [-0.05, 0.05) as Keras' default
// "uniform" embeddings_initializer unless its config names another. With a padding index (PyTorch's and
// Paddle's padding_idx) that row starts at zero, looks up as zeros and
// never gets a gradient. The table's gradient is sparse, only the
// looked-up rows (graph.Param.SparseGrad), so an SGD or Adagrad step costs
// the batch rather than the vocabulary; see optim for the other rules.
type Embedding struct {
	Table      *graph.Param
	PaddingIdx int // ops.NoPadding for none
}

// EmbeddingConfig shapes an Embedding: a table of Vocab rows of Dim. With
// Padded, row PaddingIdx (in [0, Vocab)) is the padding row; without it no
// row is, so the zero value of the padding fields means no padding.
type EmbeddingConfig struct {
	Vocab, Dim int
	Padded     bool
	PaddingIdx int
	// Init draws the [Vocab, Dim] table in place of Keras' uniform
	// ±0.05, e.g. initializer.GlorotUniform (Paddle's default) or
	// initializer.Normal(1) (PyTorch's nn.Embedding default); nil keeps
	// Keras'.
	Init initializer.Func
}

// NewEmbedding returns an Embedding shaped by cfg whose table is named
// name/embeddings.
func NewEmbedding(name string, cfg EmbeddingConfig, rng *rand.Rand, opts ...Option) (*Embedding, error) {
	c := newConfig(opts)
	vocab, dim, paddingIdx := cfg.Vocab, cfg.Dim, ops.NoPadding
	if cfg.Padded {
		paddingIdx = cfg.PaddingIdx
	}
	if vocab <= 0 || dim <= 0 || paddingIdx >= vocab || (cfg.Padded && paddingIdx < 0) {
		return nil, fmt.Errorf("layers: embedding %q: vocab=%d dim=%d padded=%v padding index %d: want positive sizes and a padding index in [0, vocab)", name, vocab, dim, cfg.Padded, cfg.PaddingIdx)
	}
	init := cfg.Init
	if init == nil {
		init = initializer.Uniform(-0.05, 0.05)
	}
	w, err := init(rng, c.dtype, vocab, dim)
	if err == nil && (w == nil || !w.Shape().Equal(tensor.Shape{vocab, dim}) || w.DType() != c.dtype) {
		got := "nil"
		if w != nil {
			got = fmt.Sprintf("%v%v", w.DType(), w.Shape())
		}
		err = fmt.Errorf("initialiser returned %s, want %v[%d %d]", got, c.dtype, vocab, dim)
	}
	if err != nil {
		return nil, fmt.Errorf("layers: embedding %q: %w", name, err)
	}
	if cfg.Padded {
		for j := range dim {
			w.SetAt(paddingIdx*dim+j, 0)
		}
	}
	return &Embedding{Table: graph.NewParam(name+"/embeddings", w), PaddingIdx: paddingIdx}, nil
}

// Lookup looks up ids, an int32 or int64 tensor of any shape, on tape t,
// giving [ids..., dim] (graph.Embedding). Ids are a tensor, as every label
// and id in Plumb: they take no gradient.
func (l *Embedding) Lookup(t *graph.Tape, ids *tensor.Tensor) *graph.Value {
	if t == nil {
		return t.Fail(errors.New("layers: embedding: nil tape"))
	}
	if err := missing("embedding", l.Table); err != nil {
		return t.Fail(err)
	}
	return out("embedding", l, nil, graph.Embedding(t.Param(l.Table), ids, l.PaddingIdx))
}

// LookupSeq looks up a ragged batch of ids [total] on tape t, giving the
// sequences of their rows [total, dim] with the batch's offsets.
func (l *Embedding) LookupSeq(t *graph.Tape, ids *tensor.Ragged) graph.Seq {
	if ids == nil {
		return graph.Seq{Values: t.Fail(errors.New("layers: embedding: nil ragged ids")), Offsets: []int{0}}
	}
	return graph.NewSeq(l.Lookup(t, ids.Values), ids.Offsets)
}

// Params returns the table.
func (l *Embedding) Params() []*graph.Param { return []*graph.Param{l.Table} }
