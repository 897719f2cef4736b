// Package translate is the PaddlePaddle book's machine translation model
// (chapter 8, machine_translation): a bidirectional GRU encoder and a GRU
// decoder with additive (Bahdanau) attention, trained with teacher forcing
// and decoded by beam search; here on Multi30k English to German.
package translate

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// Sizes shapes the model.
type Sizes struct {
	Src, Trg  int // vocabulary sizes
	Emb       int // word embedding width, both sides
	Hidden    int // GRU units: each encoder direction and the decoder
	Attention int // additive attention units
	// Dropout is the rate of inverted dropout on both embeddings' outputs
	// and on the decoder states fed to the output projection, in training
	// only (0: none): on the non-recurrent connections only, as Zaremba et
	// al. (2014, "Recurrent Neural Network Regularization") regularise
	// recurrent nets; the recurrent state itself is left undropped.
	Dropout float64
}

// DefaultDropout is the dropout rate of DefaultSizes.
const DefaultDropout = 0.3

// DefaultSizes are the sizes this package trains with by default: the
// book's layout at half its width (it uses 512), which a CPU can train on
// Multi30k.
func DefaultSizes(src, trg int) Sizes {
	return Sizes{Src: src, Trg: trg, Emb: 256, Hidden: 256, Attention: 256, Dropout: DefaultDropout}
}

// Model is the encoder-decoder. The encoder embeds the source and runs a
// bidirectional GRU (reset gate after the recurrent product, as cuDNN and
// PyTorch) over it; the attention memory is its outputs [forward,
// reverse] per source word. The decoder starts from tanh(Boot·h) with h
// the reverse GRU's final state (the book's decoder_boot from the
// backward encoder's first step), and each step t: attends over the
// memory with the previous state (Bahdanau et al. 2015: v·tanh(W1·s +
// W2·m_j)), runs a GRU cell on [embedding of word t−1, context] and
// scores the next word by the output projection of its new state.
//
// The embeddings are drawn from N(0, 1), PyTorch's nn.Embedding default:
// with Keras' uniform ±0.05 the same recipe (Adam 1e-3) learned far more
// slowly (docs/benchmarks.md). The other layers keep Keras' initialisers.
type Model struct {
	sizes   Sizes
	SrcEmb  *layers.Embedding
	Encoder *layers.GRU
	Boot    *layers.Linear
	TrgEmb  *layers.Embedding
	Attn    *layers.BahdanauAttention
	Decoder *layers.GRU    // one layer, one direction, run a step at a time
	Out     *layers.Linear // [Hidden, Trg], its loss fused with the projection
	Drop    layers.Dropout // Sizes.Dropout, drawing its masks from New's rng
}

// New builds the model with parameters drawn from rng, in float32.
func New(s Sizes, rng *rand.Rand) (*Model, error) {
	if s.Src <= 0 || s.Trg <= 0 || s.Emb <= 0 || s.Hidden <= 0 || s.Attention <= 0 {
		return nil, fmt.Errorf("translate: sizes %+v must be positive", s)
	}
	m := &Model{sizes: s}
	var err error
	if m.Drop, err = layers.NewDropout(s.Dropout, rng); err != nil {
		return nil, fmt.Errorf("translate: %w", err)
	}
	if m.SrcEmb, err = layers.NewEmbedding("translate/src_emb", layers.EmbeddingConfig{Vocab: s.Src, Dim: s.Emb, Init: initializer.Normal(1)}, rng); err != nil {
		return nil, err
	}
	enc := layers.RNNConfig{In: s.Emb, Units: s.Hidden, Bidirectional: true, ResetAfter: true}
	if m.Encoder, err = layers.NewGRU("translate/encoder", enc, rng); err != nil {
		return nil, err
	}
	if m.Boot, err = layers.NewLinear("translate/boot", s.Hidden, s.Hidden, rng); err != nil {
		return nil, err
	}
	if m.TrgEmb, err = layers.NewEmbedding("translate/trg_emb", layers.EmbeddingConfig{Vocab: s.Trg, Dim: s.Emb, Init: initializer.Normal(1)}, rng); err != nil {
		return nil, err
	}
	if m.Attn, err = layers.NewBahdanauAttention("translate/attention", layers.BahdanauAttentionConfig{QueryDim: s.Hidden, MemoryDim: 2 * s.Hidden, Units: s.Attention}, rng); err != nil {
		return nil, err
	}
	dec, err := layers.NewGRU("translate/decoder", layers.RNNConfig{In: s.Emb + 2*s.Hidden, Units: s.Hidden, ResetAfter: true}, rng)
	if err != nil {
		return nil, err
	}
	m.Decoder = dec
	if m.Out, err = layers.NewLinear("translate/out", s.Hidden, s.Trg, rng); err != nil {
		return nil, err
	}
	return m, nil
}

// Sizes returns the sizes the model was built with (zero for a nil model).
func (m *Model) Sizes() Sizes {
	if m == nil {
		return Sizes{}
	}
	return m.sizes
}

// built reports whether m has every layer and parameter New makes.
func (m *Model) built() bool {
	return m != nil && m.SrcEmb != nil && m.Encoder != nil && m.Boot != nil && m.TrgEmb != nil && m.Attn != nil &&
		m.Decoder != nil && m.Out != nil && m.Out.W != nil && m.Out.B != nil
}

func errNotBuilt(fn string) error {
	return fmt.Errorf("translate: %s: a nil model or one not built by New", fn)
}

// failed is a state whose values carry err.
func failed(t *graph.Tape, err error) State {
	v := t.Fail(err)
	return State{H: v, Mem: layers.Memory{Keys: v, Values: v}}
}

// Params returns every parameter; nil for a model not built by New.
func (m *Model) Params() []*graph.Param {
	if !m.built() {
		return nil
	}
	return layers.Params(m.SrcEmb, m.Encoder, m.Boot, m.TrgEmb, m.Attn, m.Decoder, m.Out)
}

// State is the decoder's state for a batch of hypotheses: the GRU state
// [n, Hidden] and the memory of each hypothesis's source.
type State struct {
	H   *graph.Value
	Mem layers.Memory
}

// Encode runs the encoder over a ragged batch of source ids, where the
// model's parameters are (the trainer moves a batch there,
// train.Config.Device; Translate moves its input), and returns the
// decoder's first state, one row per source.
func (m *Model) Encode(t *graph.Tape, src *tensor.Ragged) State {
	if !m.built() {
		return failed(t, errNotBuilt("Model.Encode"))
	}
	if src == nil {
		return failed(t, errors.New("translate: encode: nil source batch"))
	}
	x := m.SrcEmb.LookupSeq(t, src)
	x = x.With(m.Drop.Forward(x.Values))
	enc, finals := m.Encoder.Run(x, nil)
	if len(finals) != 2 {
		return State{H: enc.Values, Mem: layers.Memory{Keys: enc.Values, Values: enc.Values}}
	}
	return State{H: graph.Tanh(m.Boot.Forward(finals[1])), Mem: m.Attn.Memory(enc)}
}

// Step runs one decoder step on the previous words prev (int32 or int64
// ids [n] in host memory, moved to the model's device, one per row of s) and returns the new state: the output
// projection is left to the caller, applied once over every step in
// training (Loss) and per step in decoding (LogProbs).
func (m *Model) Step(t *graph.Tape, prev *tensor.Tensor, s State) State {
	if !m.built() {
		return failed(t, errNotBuilt("Model.Step"))
	}
	prev, err := m.onDevice(t, prev)
	if err != nil {
		return failed(t, fmt.Errorf("translate: step: %w", err))
	}
	ctx := m.Attn.Attend(s.H, s.Mem)
	x := graph.Concat(1, m.Drop.Forward(m.TrgEmb.Lookup(t, prev)), ctx)
	return State{H: m.Decoder.Cell(x, s.H), Mem: s.Mem}
}

// Select returns the state of rows rows of s, in that order (beam search).
func (s State) Select(rows []int) State {
	idx := make([]int64, len(rows))
	for i, r := range rows {
		idx[i] = int64(r)
	}
	ix := tensor.MustFromSlice(idx, len(idx))
	if dev := s.H.Device(); dev != nil { // the indices go where the state is
		var err error
		if ix, err = s.H.Tape().Move(ix, dev); err != nil {
			return failed(s.H.Tape(), fmt.Errorf("translate: State.Select: %w", err))
		}
	}
	return State{H: graph.Gather(s.H, ix, 0), Mem: s.Mem.Select(rows)}
}

// onDevice returns the host tensor x (ids the model derives: a step's
// previous words, the labels in decoding order, an input to translate)
// on the model's device for the step (graph.Tape.Move; Release frees the
// copy), or x itself on the host.
func (m *Model) onDevice(t *graph.Tape, x *tensor.Tensor) (*tensor.Tensor, error) {
	dev := graph.DeviceOf([]*graph.Param{m.Out.W})
	if dev == nil || x == nil {
		return x, nil
	}
	return t.Move(x, dev)
}

// Loss returns the mean cross-entropy per target word of a batch of
// ragged source ids src (on the model's device, see Encode) and, for
// teacher forcing, ragged decoder inputs trg (<s> w1 … wn) and next words
// next (w1 … wn <e>), of equal lengths, in host memory (HostFields), where
// Loss orders the batch by target length.
// The decoder runs over the batch sorted by target length, longest first,
// and each step drops the sequences that have ended, so no step computes
// padding (as PyTorch's packed sequences). The decoder states of every
// word are gathered into one [words, Hidden] matrix and the output
// projection and softmax cross-entropy run once over it, fused and in
// chunks (graph.LinearSoftmaxCrossEntropy), so the [words, V] logits are
// never held. It also returns the number of target words.
func (m *Model) Loss(t *graph.Tape, src, trg, next *tensor.Ragged) (*graph.Value, int) {
	if !m.built() {
		return t.Fail(errNotBuilt("Model.Loss")), 0
	}
	if src == nil || trg == nil || next == nil {
		return t.Fail(fmt.Errorf("translate: loss needs src, trg and trg_next")), 0
	}
	b := trg.BatchSize()
	if src.BatchSize() != b || next.BatchSize() != b || !slices.Equal(trg.Lengths(), next.Lengths()) {
		return t.Fail(fmt.Errorf("translate: loss: batches of %d sources, %d targets and %d next words of lengths %v and %v; want equal",
			src.BatchSize(), b, next.BatchSize(), trg.Lengths(), next.Lengths())), 0
	}
	in, err := trg.Values.Ints()
	if err != nil {
		return t.Fail(fmt.Errorf("translate: loss: target ids: %w", err)), 0
	}
	out, err := next.Values.Ints()
	if err != nil {
		return t.Fail(fmt.Errorf("translate: loss: next ids: %w", err)), 0
	}
	words := len(in)
	if words == 0 {
		return t.Fail(fmt.Errorf("translate: loss: a batch of %d empty targets", b)), 0
	}
	lengths := trg.Lengths()
	order := make([]int, b)
	for q := range order {
		order[q] = q
	}
	slices.SortStableFunc(order, func(p, q int) int { return cmp.Compare(lengths[q], lengths[p]) })
	s := m.Encode(t, src)
	if !slices.IsSorted(order) {
		s = s.Select(order)
	}
	labels := make([]int64, 0, words)
	var hs []*graph.Value
	for st, n := 0, b; ; st++ {
		for n > 0 && lengths[order[n-1]] <= st {
			n--
		}
		if n == 0 {
			break
		}
		s = s.head(n)
		prev := make([]int64, n)
		for i, q := range order[:n] {
			r := trg.Offsets[q] + st
			prev[i] = int64(in[r])
			labels = append(labels, int64(out[r]))
		}
		s = m.Step(t, tensor.MustFromSlice(prev, n), s)
		hs = append(hs, s.H)
	}
	h := m.Drop.Forward(graph.Concat(0, hs...))
	y, err := m.onDevice(t, tensor.MustFromSlice(labels, len(labels)))
	if err != nil {
		return t.Fail(fmt.Errorf("translate: loss: %w", err)), 0
	}
	return graph.LinearSoftmaxCrossEntropy(h, t.Param(m.Out.W), t.Param(m.Out.B), y), words
}

// head returns the state of s's first n rows.
func (s State) head(n int) State {
	if sh := s.H.Shape(); len(sh) == 0 || sh[0] == n {
		return s
	}
	return State{H: graph.Slice(s.H, 0, 0, n), Mem: s.Mem.Head(n)}
}

// LogProbs returns the next-word log-probabilities [n, Trg] of a state.
func (m *Model) LogProbs(t *graph.Tape, s State) *graph.Value {
	if !m.built() {
		return t.Fail(errNotBuilt("Model.LogProbs"))
	}
	return graph.LogSoftmax(graph.Linear(s.H, t.Param(m.Out.W), t.Param(m.Out.B)), 1)
}
