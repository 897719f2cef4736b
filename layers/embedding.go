package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Embedding is a lookup table [vocab, dim] (Keras Embedding, Paddle's
// embedding), initialised uniform in [-0.05, 0.05) as Keras' default
// "uniform" embeddings_initializer. With a padding index (PyTorch's and
// Paddle's padding_idx) that row starts at zero, looks up as zeros and
// never gets a gradient. The table's gradient is sparse, only the
// looked-up rows (graph.Param.SparseGrad), so an SGD or Adagrad step costs
// the batch rather than the vocabulary; see optim for the other rules.
type Embedding struct {
	Table      *graph.Param
	PaddingIdx int // ops.NoPadding for none
}

// NewEmbedding returns an Embedding whose table is named name/embeddings;
// paddingIdx is a row in [0, vocab) or ops.NoPadding.
func NewEmbedding(name string, vocab, dim, paddingIdx int, rng *rand.Rand, opts ...Option) (*Embedding, error) {
	c := newConfig(opts)
	if vocab <= 0 || dim <= 0 || paddingIdx >= vocab {
		return nil, fmt.Errorf("layers: embedding %q: vocab=%d dim=%d padding index %d: want positive sizes and a padding index below vocab", name, vocab, dim, paddingIdx)
	}
	w, err := tensor.RandUniform(rng, c.dtype, -0.05, 0.05, vocab, dim)
	if err != nil {
		return nil, fmt.Errorf("layers: embedding %q: %w", name, err)
	}
	if paddingIdx < 0 {
		paddingIdx = ops.NoPadding
	} else {
		for j := range dim {
			w.SetAt(paddingIdx*dim+j, 0)
		}
	}
	return &Embedding{Table: graph.NewParam(name+"/embeddings", w), PaddingIdx: paddingIdx}, nil
}

// Forward looks up ids, an int32 or int64 value of any shape (a Const on
// the tape), giving [ids..., dim]. It is the Layer form; for a ragged batch
// of ids, look up its values and keep its offsets (Seq.With).
func (l *Embedding) Forward(ids *graph.Value) *graph.Value {
	t := ids.Tape()
	if t == nil {
		return noTape("embedding", ids)
	}
	x, err := ids.Tensor()
	if err != nil {
		return ids
	}
	return graph.Embedding(t.Param(l.Table), x, l.PaddingIdx)
}

// Params returns the table.
func (l *Embedding) Params() []*graph.Param { return []*graph.Param{l.Table} }
