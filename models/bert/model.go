// Package bert is BERT's encoder (Devlin et al. 2019) as Hugging Face
// transformers' BertModel computes it (models/bert/modeling_bert.py):
// the same parameter names, the same config.json, and checkpoints written
// by save_pretrained load into it (LoadPretrained).
package bert

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Dense is one of BERT's fully connected layers, y = x·W + b, under the
// Hugging Face name prefix Name (Name+".weight", Name+".bias"). W is held
// [in, out], Plumb's Linear layout: the transpose of torch's
// nn.Linear.weight [out, in], which LoadPretrained transposes on reading.
type Dense struct {
	W, B *graph.Param
}

func (d Dense) forward(t *graph.Tape, x *graph.Value) *graph.Value {
	return graph.Linear(x, t.Param(d.W), t.Param(d.B))
}

// Norm is a LayerNorm (weight = gamma, bias = beta) over the hidden axis.
type Norm struct {
	Weight, Bias *graph.Param
}

// Layer is one encoder layer (BertLayer): self-attention (query, key,
// value, the attention output's dense and LayerNorm, post-norm as in the
// paper) and the feed-forward block (intermediate dense, activation,
// output dense and LayerNorm).
type Layer struct {
	Query, Key, Value, AttnOut Dense
	AttnNorm                   Norm
	Intermediate, Output       Dense
	OutNorm                    Norm
}

// Model is BertModel: embeddings (word, position, token type, LayerNorm),
// NumHiddenLayers encoder layers and the pooler (tanh of a dense layer on
// the first token). The word table is looked up without a padding row:
// the forward pass is transformers' for any table, while training also
// updates the [PAD] row that PyTorch's padding_idx freezes (a row padded
// positions alone read, which no real position's output depends on).
type Model struct {
	Config               Config
	Word, Position, Type *graph.Param
	EmbNorm              Norm
	Layers               []*Layer
	Pooler               *Dense // nil in BertForMaskedLM's encoder
	act                  func(*graph.Value) *graph.Value
	hiddenDrop, attnDrop layers.Dropout
	params               []*graph.Param
	byName               map[string]*graph.Param
	positionIDs          *tensor.Tensor
}

// activation returns the function named by config.json's hidden_act:
// "gelu" is the exact x·Φ(x) (transformers' GELUActivation), "gelu_new"
// and "gelu_pytorch_tanh" the tanh approximation, "relu" ReLU.
func activation(name string) (func(*graph.Value) *graph.Value, error) {
	switch name {
	case "gelu":
		return graph.Gelu, nil
	case "gelu_new", "gelu_pytorch_tanh":
		return graph.GeluTanh, nil
	case "relu":
		return graph.Relu, nil
	}
	return nil, fmt.Errorf("hidden_act %q, want gelu, gelu_new, gelu_pytorch_tanh or relu", name)
}

// New returns a BertModel shaped by cfg in float32, initialised as
// transformers' BertPreTrainedModel._init_weights does: every weight and
// embedding table normal with standard deviation initializer_range (0.02
// when the config leaves it 0), biases zero, LayerNorm weights one. rng
// draws the weights and the dropout masks.
func New(cfg Config, rng *rand.Rand) (*Model, error) {
	return newRandom("New", cfg, rng, buildWithPooler)
}

// newRandom validates cfg and builds a model with make from weights drawn
// as transformers' _init_weights draws them.
func newRandom[M any](what string, cfg Config, rng *rand.Rand, make func(Config, *rand.Rand, *paramSet) (M, error)) (M, error) {
	var zero M
	if err := cfg.Validate(); err != nil {
		return zero, fmt.Errorf("bert: %s: %w", what, err)
	}
	if rng == nil {
		return zero, fmt.Errorf("bert: %s needs a random source", what)
	}
	m, err := make(cfg, rng, randomParams(cfg, rng))
	if err != nil {
		return zero, fmt.Errorf("bert: %s: %w", what, err)
	}
	return m, nil
}

// buildWithPooler is BertModel's build: the encoder and the pooler.
func buildWithPooler(cfg Config, rng *rand.Rand, s *paramSet) (*Model, error) {
	return build(cfg, rng, s, true)
}

// paramSet makes parameters under Hugging Face names: weights and tables
// from weight (called with the name, whether it is a dense kernel held
// transposed, and the Plumb shape), biases zero and LayerNorm weights one.
// It lists every parameter it made, for a loader to fill.
type paramSet struct {
	weight     func(name string, transposed bool, shape ...int) *tensor.Tensor
	all        []*graph.Param
	transposed map[string]bool // the [in, out] kernels, [out, in] in Hugging Face's files
}

// randomParams draws weights as transformers' _init_weights does.
func randomParams(cfg Config, rng *rand.Rand) *paramSet {
	std := cfg.InitializerRange
	if std == 0 {
		std = 0.02
	}
	return &paramSet{transposed: map[string]bool{}, weight: func(_ string, _ bool, shape ...int) *tensor.Tensor {
		x := make([]float32, tensor.Shape(shape).Size())
		for i := range x {
			x[i] = float32(rng.NormFloat64() * std)
		}
		return tensor.MustFromSlice(x, shape...)
	}}
}

func (s *paramSet) add(name string, t *tensor.Tensor) *graph.Param {
	p := graph.NewParam(name, t)
	s.all = append(s.all, p)
	return p
}

func (s *paramSet) table(name string, rows, cols int) *graph.Param {
	return s.add(name, s.weight(name, false, rows, cols))
}

func (s *paramSet) dense(name string, from, to int) Dense {
	s.transposed[name+".weight"] = true
	return Dense{W: s.add(name+".weight", s.weight(name+".weight", true, from, to)), B: s.add(name+".bias", tensor.Zeros(tensor.Float32, to))}
}

func (s *paramSet) norm(name string, n int) Norm {
	one, _ := tensor.Ones(tensor.Float32, n)
	return Norm{Weight: s.add(name+".weight", one), Bias: s.add(name+".bias", tensor.Zeros(tensor.Float32, n))}
}

// build makes the encoder's parameters from s, with the pooler or (as in
// BertForMaskedLM) without.
func build(cfg Config, rng *rand.Rand, s *paramSet, pooler bool) (*Model, error) {
	act, err := activation(cfg.HiddenAct)
	if err != nil {
		return nil, err
	}
	hd, err := layers.NewDropout(cfg.HiddenDropoutProb, rng)
	if err != nil {
		return nil, err
	}
	ad, err := layers.NewDropout(cfg.AttentionDropoutProb, rng)
	if err != nil {
		return nil, err
	}
	h, in := cfg.HiddenSize, cfg.IntermediateSize
	m := &Model{Config: cfg, act: act, hiddenDrop: hd, attnDrop: ad, byName: map[string]*graph.Param{}}
	first := len(s.all)
	m.Word = s.table("embeddings.word_embeddings.weight", cfg.VocabSize, h)
	m.Position = s.table("embeddings.position_embeddings.weight", cfg.MaxPositionEmbeddings, h)
	m.Type = s.table("embeddings.token_type_embeddings.weight", cfg.TypeVocabSize, h)
	m.EmbNorm = s.norm("embeddings.LayerNorm", h)
	for i := range cfg.NumHiddenLayers {
		p := "encoder.layer." + strconv.Itoa(i) + "."
		l := &Layer{}
		l.Query = s.dense(p+"attention.self.query", h, h)
		l.Key = s.dense(p+"attention.self.key", h, h)
		l.Value = s.dense(p+"attention.self.value", h, h)
		l.AttnOut = s.dense(p+"attention.output.dense", h, h)
		l.AttnNorm = s.norm(p+"attention.output.LayerNorm", h)
		l.Intermediate = s.dense(p+"intermediate.dense", h, in)
		l.Output = s.dense(p+"output.dense", in, h)
		l.OutNorm = s.norm(p+"output.LayerNorm", h)
		m.Layers = append(m.Layers, l)
	}
	if pooler {
		d := s.dense("pooler.dense", h, h)
		m.Pooler = &d
	}
	m.params = s.all[first:len(s.all):len(s.all)]
	for _, p := range m.params {
		m.byName[p.Name] = p
	}
	pos := make([]int64, cfg.MaxPositionEmbeddings)
	for i := range pos {
		pos[i] = int64(i)
	}
	m.positionIDs = tensor.MustFromSlice(pos, len(pos))
	return m, nil
}

// Params returns every parameter in transformers' named_parameters order
// (embeddings, layers, pooler), each named as in a save_pretrained file.
func (m *Model) Params() []*graph.Param { return m.params }

// Param returns the parameter of a Hugging Face name, or nil.
func (m *Model) Param(name string) *graph.Param { return m.byName[name] }

// Batch is a padded batch of B token sequences of length T: IDs,
// TokenTypes (nil: all 0, transformers' default) and AttentionMask (1 on
// tokens, 0 on padding; nil: every position is a token), each [B, T]
// int32 or int64, as transformers' input_ids, token_type_ids and
// attention_mask.
type Batch struct {
	IDs, TokenTypes, AttentionMask *tensor.Tensor
}

// NewBatch pads ragged sequences of token ids (and, when types is not
// nil, their token types, one per id) into a Batch with 0 after each
// sequence's end ([PAD] in BERT's vocabularies) and an attention mask
// that is 1 on each sequence's tokens.
func NewBatch(ids, types [][]int) (Batch, error) {
	if len(ids) == 0 {
		return Batch{}, errors.New("bert: NewBatch of no sequences")
	}
	if types != nil && len(types) != len(ids) {
		return Batch{}, fmt.Errorf("bert: NewBatch: %d sequences of types for %d of ids", len(types), len(ids))
	}
	t := 0
	for i, s := range ids {
		if types != nil && len(types[i]) != len(s) {
			return Batch{}, fmt.Errorf("bert: NewBatch: sequence %d has %d ids and %d types", i, len(s), len(types[i]))
		}
		t = max(t, len(s))
	}
	if t == 0 {
		return Batch{}, errors.New("bert: NewBatch: every sequence is empty")
	}
	b := len(ids)
	id, ty, mask := make([]int64, b*t), make([]int64, b*t), make([]int64, b*t)
	for i, s := range ids {
		for j, v := range s {
			id[i*t+j], mask[i*t+j] = int64(v), 1
			if types != nil {
				ty[i*t+j] = int64(types[i][j])
			}
		}
	}
	return Batch{IDs: tensor.MustFromSlice(id, b, t), TokenTypes: tensor.MustFromSlice(ty, b, t), AttentionMask: tensor.MustFromSlice(mask, b, t)}, nil
}

// check validates a batch on dev (nil: host memory) against the model's
// tables and returns B and T. A batch in host memory has its ids checked against the tables; one on
// the parameters' device (Batch.To) has only its shapes and types
// checked, since reading it back would cost a copy a step.
func (m *Model) check(b Batch, dev tensor.Device) (int, int, error) {
	if b.IDs == nil {
		return 0, 0, errors.New("bert: Forward: batch without IDs")
	}
	s := b.IDs.Shape()
	if len(s) != 2 || s[0] == 0 || s[1] == 0 {
		return 0, 0, fmt.Errorf("bert: Forward: IDs %v, want [B, T] with B, T > 0", s)
	}
	if s[1] > m.Config.MaxPositionEmbeddings {
		return 0, 0, fmt.Errorf("bert: Forward: %d positions, more than max_position_embeddings=%d", s[1], m.Config.MaxPositionEmbeddings)
	}
	for _, f := range []struct {
		name string
		t    *tensor.Tensor
		hi   int
	}{{"IDs", b.IDs, m.Config.VocabSize}, {"TokenTypes", b.TokenTypes, m.Config.TypeVocabSize}, {"AttentionMask", b.AttentionMask, 2}} {
		if f.t == nil {
			continue
		}
		dt := f.t.DType()
		if dt != tensor.Int32 && dt != tensor.Int64 && (f.name != "AttentionMask" || dt != m.Word.Value.DType()) {
			return 0, 0, fmt.Errorf("bert: Forward: %s are %v, want int32 or int64", f.name, dt)
		}
		if !f.t.Shape().Equal(s) {
			return 0, 0, fmt.Errorf("bert: Forward: %s %v, IDs %v; want the same shape", f.name, f.t.Shape(), s)
		}
		if f.t.Device() != dev {
			return 0, 0, fmt.Errorf("bert: Forward: %s on %s, the parameters on %s; want the batch where the parameters are (Batch.To)", f.name, where(f.t.Device()), where(dev))
		}
		if dev != nil {
			continue
		}
		for i := range f.t.Size() {
			if v := f.t.At(i); v < 0 || v >= float64(f.hi) {
				return 0, 0, fmt.Errorf("bert: Forward: %s[%d] = %v outside [0, %d)", f.name, i, v, f.hi)
			}
		}
	}
	return s[0], s[1], nil
}

// where names a tensor's device for an error: host memory for nil.
func where(d tensor.Device) string {
	if d == nil {
		return "host memory"
	}
	return d.String()
}

// To returns the batch on the device dev for a model of parameter type
// dt (float32, or float64 for gradient checks), as the trainer moves a
// batch before a step (train.Config.Device): the ids are checked against
// the model's tables in host memory first, and the attention mask is cast
// to dt there, since casts run in host memory. A nil dev leaves the batch
// in host memory with its mask cast. The copies belong to the tape t.
func (b Batch) To(t *graph.Tape, m *Model, dev tensor.Device) (Batch, error) {
	if m == nil || m.Word == nil {
		return Batch{}, errors.New("bert: Batch.To for a model not made by New or LoadPretrained")
	}
	if _, _, err := m.check(b, nil); err != nil {
		return Batch{}, err
	}
	out := b
	if b.AttentionMask != nil {
		mf, err := b.AttentionMask.Cast(m.Word.Value.DType())
		if err != nil {
			return Batch{}, fmt.Errorf("bert: Batch.To: %w", err)
		}
		out.AttentionMask = mf
	}
	if dev == nil {
		return out, nil
	}
	for _, x := range []**tensor.Tensor{&out.IDs, &out.TokenTypes, &out.AttentionMask} {
		if *x == nil {
			continue
		}
		moved, err := t.Move(*x, dev)
		if err != nil {
			return Batch{}, fmt.Errorf("bert: Batch.To: %w", err)
		}
		*x = moved
	}
	return out, nil
}

// Forward runs the encoder on a batch and returns last_hidden_state
// [B, T, hidden] and pooler_output [B, hidden] (a value carrying an error
// for a model without the pooler). Each query attends to the
// keys its row's attention mask marks (BertSelfAttention with
// transformers' extended attention mask); padded positions get outputs as
// in transformers, computed from the unmasked keys. Dropout applies on a
// training tape: after the embeddings, on the attention probabilities and
// on each sublayer's output before its residual sum. The batch is where
// the parameters are: in host memory, or moved to their device by
// Batch.To (the caller's move, as the trainer's).
func (m *Model) Forward(t *graph.Tape, b Batch) (hidden, pooled *graph.Value) {
	if t == nil {
		v := t.Fail(errors.New("bert: Forward on a nil tape"))
		return v, v
	}
	if m == nil || m.Word == nil || len(m.Layers) != m.Config.NumHiddenLayers {
		v := t.Fail(errors.New("bert: Forward on a model not made by New or LoadPretrained"))
		return v, v
	}
	bs, tl, err := m.check(b, m.Word.Value.Device())
	if err != nil {
		v := t.Fail(err)
		return v, v
	}
	cfg := m.Config
	types := b.TokenTypes
	if types == nil {
		types = tensor.Zeros(tensor.Int64, bs, tl)
	}
	pos, _ := m.positionIDs.Slice(0, 0, tl)
	var mf *tensor.Tensor
	if b.AttentionMask != nil {
		if mf, err = b.AttentionMask.Cast(m.Word.Value.DType()); err != nil { // float32, or float64 for gradient checks
			v := t.Fail(err)
			return v, v
		}
	}
	// The batch is where the parameters are (check); the position ids and
	// the default token types, which the model makes, go there too.
	in := []*tensor.Tensor{b.IDs, b.TokenTypes, pos, mf}
	if dev := m.Word.Value.Device(); dev != nil {
		made := []int{2}
		if b.TokenTypes == nil {
			in[1], made = types, []int{1, 2}
		}
		for _, i := range made {
			if in[i], err = t.Move(in[i], dev); err != nil {
				v := t.Fail(fmt.Errorf("bert: Forward: %w", err))
				return v, v
			}
		}
	} else {
		in[1] = types
	}
	x := graph.Add(graph.Add(graph.Embedding(t.Param(m.Word), in[0], ops.NoPadding),
		graph.Embedding(t.Param(m.Type), in[1], ops.NoPadding)),
		graph.Embedding(t.Param(m.Position), in[2], ops.NoPadding))
	x = m.hiddenDrop.Forward(m.norm(t, m.EmbNorm, x))

	var mask *graph.Value
	if mf != nil {
		mask = t.Const(in[3])
	}
	heads := cfg.NumAttentionHeads
	dh := cfg.HiddenSize / heads
	split := func(y *graph.Value) *graph.Value { // [B, T, H·dh] → [B, H, T, dh]
		return graph.Transpose(graph.Reshape(y, bs, tl, heads, dh), 0, 2, 1, 3)
	}
	for _, l := range m.Layers {
		q, k, v := split(l.Query.forward(t, x)), split(l.Key.forward(t, x)), split(l.Value.forward(t, x))
		ctx := layers.ScaledDotProductAttention(q, k, v, mask, ops.AttentionAttrs{}, m.attnDrop)
		ctx = graph.Reshape(graph.Transpose(ctx, 0, 2, 1, 3), bs, tl, cfg.HiddenSize)
		x = m.norm(t, l.AttnNorm, graph.Add(m.hiddenDrop.Forward(l.AttnOut.forward(t, ctx)), x))
		ff := l.Output.forward(t, m.act(l.Intermediate.forward(t, x)))
		x = m.norm(t, l.OutNorm, graph.Add(m.hiddenDrop.Forward(ff), x))
	}
	if m.Pooler == nil {
		return x, t.Fail(errors.New("bert: Forward: the model has no pooler (a masked-LM encoder)"))
	}
	first := graph.Reshape(graph.Slice(x, 1, 0, 1), bs, cfg.HiddenSize)
	return x, graph.Tanh(m.Pooler.forward(t, first))
}

func (m *Model) norm(t *graph.Tape, n Norm, x *graph.Value) *graph.Value {
	return graph.LayerNorm(x, t.Param(n.Weight), t.Param(n.Bias), 1, m.Config.LayerNormEps)
}
