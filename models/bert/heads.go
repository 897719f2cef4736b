package bert

import (
	"errors"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// MaskedLM is transformers' BertForMaskedLM: the encoder without the
// pooler and the masked-language-model head (BertLMPredictionHead,
// Devlin et al. 2019 section 3.1, task 1): transform = LayerNorm(act(dense(h)))
// and logits = transform·Eᵀ + bias, the decoder tied to the word
// embeddings E. Parameter names are bert.<encoder's>,
// cls.predictions.transform.dense, cls.predictions.transform.LayerNorm and
// cls.predictions.bias.
type MaskedLM struct {
	Bert      *Model
	Transform Dense
	Norm      Norm
	Bias      *graph.Param
	heads     []*graph.Param
}

func buildMaskedLM(cfg Config, rng *rand.Rand, s *paramSet) (*MaskedLM, error) {
	enc, err := build(cfg, rng, s, false)
	if err != nil {
		return nil, err
	}
	first := len(s.all)
	h := cfg.HiddenSize
	m := &MaskedLM{Bert: enc}
	m.Transform = s.dense("cls.predictions.transform.dense", h, h)
	m.Norm = s.norm("cls.predictions.transform.LayerNorm", h)
	m.Bias = s.add("cls.predictions.bias", tensor.Zeros(tensor.Float32, cfg.VocabSize))
	m.heads = s.all[first:len(s.all):len(s.all)]
	for _, p := range enc.params { // the task models' names
		p.Name = "bert." + p.Name
	}
	return m, nil
}

// NewMaskedLM returns a BertForMaskedLM shaped by cfg with transformers'
// initialisation (New's).
func NewMaskedLM(cfg Config, rng *rand.Rand) (*MaskedLM, error) {
	return newRandom("NewMaskedLM", cfg, rng, buildMaskedLM)
}

// LoadMaskedLM reads a BertForMaskedLM.save_pretrained directory, as
// LoadPretrained reads a BertModel's.
func LoadMaskedLM(dir string, rng *rand.Rand) (*MaskedLM, error) {
	return loadDir(dir, "BertForMaskedLM", rng, buildMaskedLM)
}

// Params returns the encoder's and the head's parameters.
func (m *MaskedLM) Params() []*graph.Param {
	if m == nil || m.Bert == nil {
		return nil
	}
	return append(append([]*graph.Param(nil), m.Bert.params...), m.heads...)
}

// Logits runs the encoder on b and returns the vocabulary logits of the
// positions rows (flat indices b·T + t into the batch, int32 or int64, as
// the masked positions of MaskTokens) as [len(rows), vocab]; with rows nil,
// of every position, [B, T, vocab]. rows are where the model is, as the
// batch (Batch.To).
func (m *MaskedLM) Logits(t *graph.Tape, b Batch, rows *tensor.Tensor) *graph.Value {
	if m == nil || m.Bert == nil || m.Bias == nil {
		return t.Fail(errors.New("bert: MaskedLM.Logits on a model not made by NewMaskedLM or LoadMaskedLM"))
	}
	h, _ := m.Bert.Forward(t, b)
	s := h.Shape()
	if s == nil {
		return h
	}
	if rows != nil {
		h = graph.Gather(graph.Reshape(h, s[0]*s[1], s[2]), rows, 0)
	}
	x := m.Bert.norm(t, m.Norm, m.Bert.act(m.Transform.forward(t, h)))
	return graph.Add(graph.MatMul(x, t.Param(m.Bert.Word), false, true), t.Param(m.Bias))
}

// SequenceClassifier is transformers' BertForSequenceClassification: the
// encoder, dropout on the pooled output and a dense layer to NumLabels
// logits, named bert.<encoder's> and classifier.
type SequenceClassifier struct {
	Bert       *Model
	Classifier Dense
	drop       layers.Dropout
}

func buildClassifier(cfg Config, rng *rand.Rand, s *paramSet) (*SequenceClassifier, error) {
	enc, err := build(cfg, rng, s, true)
	if err != nil {
		return nil, err
	}
	rate := cfg.ClassifierDropout
	if rate == 0 {
		rate = cfg.HiddenDropoutProb
	}
	drop, err := layers.NewDropout(rate, rng)
	if err != nil {
		return nil, err
	}
	for _, p := range enc.params {
		p.Name = "bert." + p.Name
	}
	return &SequenceClassifier{Bert: enc, Classifier: s.dense("classifier", cfg.HiddenSize, cfg.NumLabels()), drop: drop}, nil
}

// NewSequenceClassifier returns a BertForSequenceClassification shaped by
// cfg (cfg.NumLabels classes) with transformers' initialisation.
func NewSequenceClassifier(cfg Config, rng *rand.Rand) (*SequenceClassifier, error) {
	return newRandom("NewSequenceClassifier", cfg, rng, buildClassifier)
}

// LoadSequenceClassifier reads a BertForSequenceClassification
// save_pretrained directory, as LoadPretrained reads a BertModel's.
func LoadSequenceClassifier(dir string, rng *rand.Rand) (*SequenceClassifier, error) {
	return loadDir(dir, "BertForSequenceClassification", rng, buildClassifier)
}

// Params returns the encoder's and the classifier's parameters.
func (c *SequenceClassifier) Params() []*graph.Param {
	if c == nil || c.Bert == nil {
		return nil
	}
	return append(append([]*graph.Param(nil), c.Bert.params...), c.Classifier.W, c.Classifier.B)
}

// Logits runs the encoder on b and returns the class logits [B, NumLabels].
func (c *SequenceClassifier) Logits(t *graph.Tape, b Batch) *graph.Value {
	if c == nil || c.Bert == nil || c.Classifier.W == nil {
		return t.Fail(errors.New("bert: SequenceClassifier.Logits on a model not made by NewSequenceClassifier or LoadSequenceClassifier"))
	}
	_, pooled := c.Bert.Forward(t, b)
	return c.Classifier.forward(t, c.drop.Forward(pooled))
}
