// Package transformer is a small Transformer encoder-decoder for
// translation (Vaswani et al. 2017): a shared subword embedding scaled by
// sqrt(d_model) plus sinusoidal positions, layers.TransformerEncoderLayer
// and layers.TransformerDecoderLayer stacks (a final layer norm on each
// with pre-norm, as PyTorch's nn.Transformer with norm_first), and an
// output projection tied to the embedding (section 3.4).
//
// Decoding runs through package decode in two ways that give the same
// tokens: incrementally over a key/value cache (Cache: each step feeds
// only the new token, attends over the cached keys and values, and the
// memory's keys and values are projected once per source), and by
// recomputing the whole prefix at every step (Prefixes), the reference
// the cache is checked and timed against.
package transformer

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Config shapes a Model: a shared vocabulary of Vocab tokens, Layers
// encoder and Layers decoder layers of DModel features, Heads heads and a
// feed-forward block of FF units, positions up to MaxLen.
type Config struct {
	Vocab, DModel, Heads, FF, Layers, MaxLen int
	PreNorm                                  bool
	Dropout                                  float64
}

// Model is the encoder-decoder. Parameters are named emb/..., enc<i>/...,
// dec<i>/..., enc_norm, dec_norm (pre-norm only) and out/bias.
type Model struct {
	Cfg              Config
	Emb              *layers.Embedding
	Pos              *layers.PositionEmbedding
	Encoder          []*layers.TransformerEncoderLayer
	Decoder          []*layers.TransformerDecoderLayer
	EncNorm, DecNorm *layers.LayerNorm // nil without PreNorm
	Out              *layers.TiedOutput
}

// New returns a model shaped by cfg with weights drawn from rng: the
// embedding N(0, d_model^-1/2) (so that the scaled embedding has unit
// variance), the layers as their constructors draw them.
func New(cfg Config, rng *rand.Rand) (*Model, error) {
	if cfg.Vocab < 1 || cfg.Layers < 1 || cfg.MaxLen < 1 {
		return nil, fmt.Errorf("transformer: vocab=%d layers=%d max_len=%d; want positive", cfg.Vocab, cfg.Layers, cfg.MaxLen)
	}
	if rng == nil {
		return nil, errors.New("transformer: nil rng")
	}
	tc := layers.TransformerConfig{DModel: cfg.DModel, Heads: cfg.Heads, FF: cfg.FF, Dropout: cfg.Dropout, PreNorm: cfg.PreNorm}
	m := &Model{Cfg: cfg}
	var err error
	if m.Emb, err = layers.NewEmbedding("emb", layers.EmbeddingConfig{Vocab: cfg.Vocab, Dim: cfg.DModel,
		Init: initializer.Normal(1 / math.Sqrt(float64(max(cfg.DModel, 1))))}, rng); err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	if m.Pos, err = layers.NewSinusoidalPositionEmbedding("pos", cfg.MaxLen, cfg.DModel); err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	for i := range cfg.Layers {
		enc, err := layers.NewTransformerEncoderLayer(fmt.Sprintf("enc%d", i), tc, rng)
		if err != nil {
			return nil, fmt.Errorf("transformer: %w", err)
		}
		dec, err := layers.NewTransformerDecoderLayer(fmt.Sprintf("dec%d", i), tc, rng)
		if err != nil {
			return nil, fmt.Errorf("transformer: %w", err)
		}
		m.Encoder, m.Decoder = append(m.Encoder, enc), append(m.Decoder, dec)
	}
	if cfg.PreNorm {
		if m.EncNorm, err = layers.NewLayerNorm("enc_norm", cfg.DModel); err != nil {
			return nil, fmt.Errorf("transformer: %w", err)
		}
		if m.DecNorm, err = layers.NewLayerNorm("dec_norm", cfg.DModel); err != nil {
			return nil, fmt.Errorf("transformer: %w", err)
		}
	}
	if m.Out, err = layers.NewTiedOutput("out", m.Emb); err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	return m, nil
}

// check reports a model not made by New.
func (m *Model) check() error {
	if m == nil || m.Emb == nil || m.Pos == nil || m.Out == nil || len(m.Encoder) == 0 || len(m.Decoder) != len(m.Encoder) ||
		(m.Cfg.PreNorm && (m.EncNorm == nil || m.DecNorm == nil)) {
		return errors.New("transformer: model not made by New")
	}
	return nil
}

// embed returns the embeddings [B, T, DModel] of ids (B rows of T tokens
// each) at positions from, from+1, ...: sqrt(d_model)·E[id] + PE[pos].
func (m *Model) embed(t *graph.Tape, ids [][]int, from int) *graph.Value {
	if len(ids) == 0 || len(ids[0]) == 0 {
		return t.Fail(errors.New("transformer: no tokens to embed"))
	}
	b, n := len(ids), len(ids[0])
	if from+n > m.Cfg.MaxLen {
		return t.Fail(fmt.Errorf("transformer: positions up to %d; the model has %d", from+n, m.Cfg.MaxLen))
	}
	flat := make([]int64, 0, b*n)
	for i, row := range ids {
		if len(row) != n {
			return t.Fail(fmt.Errorf("transformer: row %d has %d tokens, row 0 has %d", i, len(row), n))
		}
		for _, id := range row {
			if id < 0 || id >= m.Cfg.Vocab {
				return t.Fail(fmt.Errorf("transformer: token %d outside the vocabulary of %d", id, m.Cfg.Vocab))
			}
			flat = append(flat, int64(id))
		}
	}
	pos := make([]int64, n)
	for i := range pos {
		pos[i] = int64(from + i)
	}
	scale, err := tensor.Full(m.Emb.Table.Value.DType(), math.Sqrt(float64(m.Cfg.DModel)), 1)
	if err != nil {
		return t.Fail(err)
	}
	x := graph.Mul(m.Emb.Lookup(t, tensor.MustFromSlice(flat, b, n)), t.Const(scale))
	return graph.Add(x, graph.Embedding(t.Param(m.Pos.Table), tensor.MustFromSlice(pos, n), ops.NoPadding))
}

// Encode returns the memory [B, Tk, DModel] of the sources src (B token
// sequences of their own lengths, padded to the longest, Tk) and their
// lengths, the decoder's cross-attention key lengths.
func (m *Model) Encode(t *graph.Tape, src [][]int) (*graph.Value, []int) {
	if t == nil {
		return t.Fail(errors.New("transformer: Encode: nil tape")), nil
	}
	if err := m.check(); err != nil {
		return t.Fail(err), nil
	}
	lengths, tk := make([]int, len(src)), 0
	for i, s := range src {
		if len(s) == 0 {
			return t.Fail(fmt.Errorf("transformer: Encode: source %d is empty", i)), nil
		}
		lengths[i], tk = len(s), max(tk, len(s))
	}
	padded := make([][]int, len(src))
	for i, s := range src {
		padded[i] = append(append(make([]int, 0, tk), s...), make([]int, tk-len(s))...)
	}
	x := m.embed(t, padded, 0)
	for _, l := range m.Encoder {
		x = l.Forward(x, nil, ops.AttentionAttrs{KeyLengths: lengths})
	}
	if m.EncNorm != nil {
		x = m.EncNorm.Forward(x)
	}
	return x, lengths
}

// Decode returns the logits [B, T, Vocab] of the next token after each
// prefix of the targets tgt (B rows of T tokens, each starting with the
// start token) attending over memory [B, Tk, DModel] with the sources'
// lengths: teacher forcing, every position at once under the causal mask.
func (m *Model) Decode(tgt [][]int, memory *graph.Value, lengths []int) *graph.Value {
	return m.output(m.decodeStates(tgt, memory, lengths))
}

// decodeStates returns the decoder stack's outputs [B, T, DModel] for
// Decode, before the final norm and the projection.
func (m *Model) decodeStates(tgt [][]int, memory *graph.Value, lengths []int) *graph.Value {
	t := memory.Tape()
	if t == nil {
		return t.Fail(errors.New("transformer: Decode: nil memory"))
	}
	if err := m.check(); err != nil {
		return t.Fail(err)
	}
	y := m.embed(t, tgt, 0)
	for _, l := range m.Decoder {
		y = l.Forward(y, memory, nil, ops.AttentionAttrs{}, ops.AttentionAttrs{KeyLengths: lengths})
	}
	return y
}

// output applies the final norm (pre-norm) and the tied projection.
func (m *Model) output(y *graph.Value) *graph.Value {
	if err := m.check(); err != nil {
		return y.Tape().Fail(err)
	}
	if m.DecNorm != nil {
		y = m.DecNorm.Forward(y)
	}
	return m.Out.Forward(y)
}

// Params returns every parameter, the embedding table once.
func (m *Model) Params() []*graph.Param {
	if m == nil {
		return nil
	}
	ps := layers.Params(m.Emb, m.Pos)
	for i := range m.Encoder {
		ps = append(ps, m.Encoder[i].Params()...)
	}
	for i := range m.Decoder {
		ps = append(ps, m.Decoder[i].Params()...)
	}
	if m.EncNorm != nil {
		ps = append(ps, layers.Params(m.EncNorm, m.DecNorm)...)
	}
	return append(ps, m.Out.Params()...)
}
