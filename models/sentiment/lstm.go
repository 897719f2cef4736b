package sentiment

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The stacked LSTM net's sizes (06.understand_sentiment/train_stacked_lstm.py):
// fc layers of 512 units, each the gate projections of an LSTM of 128
// (Fluid's dynamic_lstm of size 512 holds 512/4 hidden units), 3 of each.
const (
	FCSize  = 512
	Hidden  = FCSize / 4
	Stacked = 3
)

// StackedLSTM is the book's stacked_lstm_net: embedding 128 → fc 512 →
// LSTM; then twice fc 512 over [previous fc, previous LSTM] → LSTM, the
// second LSTM running backwards (is_reverse for even layers), so
// directions alternate; max pooling over time of the last fc and the last
// LSTM, concatenated into an fc of two classes. The fc layers have no
// activation (Fluid's default); each LSTM reads its fc as the gates'
// input projections (layers.ProjectedLSTM), without peepholes (Keras and
// PyTorch LSTMs have none; Fluid's dynamic_lstm defaults to them).
type StackedLSTM struct {
	Emb    *layers.Embedding
	FCs    []*layers.Linear
	LSTMs  []*layers.ProjectedLSTM
	Output *layers.Linear
}

// NewStackedLSTM returns the stacked LSTM net for a dictionary of vocab words.
func NewStackedLSTM(vocab int, rng *rand.Rand, opts ...layers.Option) (*StackedLSTM, error) {
	emb, err := layers.NewEmbedding("lstm/emb", layers.EmbeddingConfig{Vocab: vocab, Dim: Embed}, rng, opts...)
	if err != nil {
		return nil, err
	}
	m := &StackedLSTM{Emb: emb}
	in := Embed
	for i := 1; i <= Stacked; i++ {
		fc, err := layers.NewLinear(fmt.Sprintf("lstm/fc%d", i), in, FCSize, rng, opts...)
		if err != nil {
			return nil, err
		}
		l, err := layers.NewProjectedLSTM(fmt.Sprintf("lstm/lstm%d", i), layers.RNNConfig{Units: Hidden, Reverse: i%2 == 0}, rng, opts...)
		if err != nil {
			return nil, err
		}
		m.FCs, m.LSTMs = append(m.FCs, fc), append(m.LSTMs, l)
		in = FCSize + Hidden
	}
	if m.Output, err = layers.NewLinear("lstm/out", FCSize+Hidden, Classes, rng, opts...); err != nil {
		return nil, err
	}
	return m, nil
}

// Logits maps a ragged batch of ids to [B, 2].
func (m *StackedLSTM) Logits(t *graph.Tape, words *tensor.Ragged) *graph.Value {
	if !m.built() {
		return t.Fail(errNotBuilt("StackedLSTM.Logits", "NewStackedLSTM"))
	}
	x := embed(t, m.Emb, words)
	fc := x.With(m.FCs[0].Forward(x.Values))
	h := m.LSTMs[0].Forward(fc)
	for i := 1; i < len(m.FCs); i++ {
		fc = x.With(m.FCs[i].ForwardConcat(fc.Values, h.Values))
		h = m.LSTMs[i].Forward(fc)
	}
	return m.Output.ForwardConcat(graph.SequencePool(fc, ops.SequencePoolMax, 0), graph.SequencePool(h, ops.SequencePoolMax, 0))
}

// Params returns every parameter; nil for a net not built by
// NewStackedLSTM.
func (m *StackedLSTM) Params() []*graph.Param {
	if !m.built() {
		return nil
	}
	ms := layers.Modules{m.Emb}
	for i := range m.FCs {
		ms = append(ms, m.FCs[i], m.LSTMs[i])
	}
	return append(ms, m.Output).Params()
}

// built reports whether m has every layer NewStackedLSTM makes: as many
// LSTMs as fc layers, at least one.
func (m *StackedLSTM) built() bool {
	return m != nil && m.Emb != nil && m.Output != nil && len(m.FCs) > 0 && len(m.FCs) == len(m.LSTMs) &&
		!slices.Contains(m.FCs, nil) && !slices.Contains(m.LSTMs, nil)
}
