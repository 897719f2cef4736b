package sentiment

import (
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

type randSource = *rand.Rand

// Filters is the text CNN's number of filters per window (the book's
// convolution_net with hid_dim 128).
const Filters = 128

// CNN is the book's convolution_net: an embedding of 128, then for windows
// of 3 and 4 words a sequence convolution of 128 filters with tanh,
// max-pooled over each review (Paddle's sequence_conv_pool), the two
// pooled vectors concatenated into an fc layer of two classes.
type CNN struct {
	Emb    *layers.Embedding
	Convs  []*layers.SequenceConv // windows 3 and 4
	Output *layers.Linear
}

// NewCNN returns the text CNN. Each window starts at -(window/2), as
// Fluid's sequence_conv centres it: steps -1..1 for 3 and -2..1 for 4;
// steps outside a review are zeros.
func NewCNN(vocab int, rng *rand.Rand, opts ...layers.Option) (*CNN, error) {
	emb, err := layers.NewEmbedding("cnn/emb", layers.EmbeddingConfig{Vocab: vocab, Dim: Embed}, rng, opts...)
	if err != nil {
		return nil, err
	}
	m := &CNN{Emb: emb}
	for _, w := range []int{3, 4} {
		c, err := layers.NewSequenceConv(convName(w), layers.SequenceConvConfig{In: Embed, Out: Filters, ContextStart: -(w / 2), ContextLength: w}, rng, opts...)
		if err != nil {
			return nil, err
		}
		m.Convs = append(m.Convs, c)
	}
	if m.Output, err = layers.NewLinear("cnn/fc", 2*Filters, Classes, rng, opts...); err != nil {
		return nil, err
	}
	return m, nil
}

func convName(w int) string { return "cnn/conv" + string(rune('0'+w)) }

// Logits maps a ragged batch of ids to [B, 2].
func (m *CNN) Logits(t *graph.Tape, words *tensor.Ragged) *graph.Value {
	if !m.built() {
		return t.Fail(errNotBuilt("CNN.Logits", "NewCNN"))
	}
	e := embed(t, m.Emb, words)
	pooled := make([]*graph.Value, len(m.Convs))
	for i, c := range m.Convs {
		pooled[i] = c.ForwardMaxPool(e, graph.Tanh)
	}
	return m.Output.Forward(graph.Concat(1, pooled...))
}

// Params returns every parameter; nil for a CNN not built by NewCNN.
func (m *CNN) Params() []*graph.Param {
	if !m.built() {
		return nil
	}
	return layers.Params(m.Emb, layers.List(m.Convs), m.Output)
}

// built reports whether m has every layer NewCNN makes.
func (m *CNN) built() bool {
	return m != nil && m.Emb != nil && m.Output != nil && len(m.Convs) > 0 && !slices.Contains(m.Convs, nil)
}
