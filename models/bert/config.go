package bert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Config is the part of Hugging Face transformers' BertConfig that the
// encoder reads, under config.json's names (transformers'
// configuration_bert.py). Fields config.json holds beyond these
// (architectures, pad_token_id, ...) are ignored.
type Config struct {
	VocabSize             int     `json:"vocab_size"`
	HiddenSize            int     `json:"hidden_size"`
	NumHiddenLayers       int     `json:"num_hidden_layers"`
	NumAttentionHeads     int     `json:"num_attention_heads"`
	IntermediateSize      int     `json:"intermediate_size"`
	HiddenAct             string  `json:"hidden_act"`
	HiddenDropoutProb     float64 `json:"hidden_dropout_prob"`
	AttentionDropoutProb  float64 `json:"attention_probs_dropout_prob"`
	MaxPositionEmbeddings int     `json:"max_position_embeddings"`
	TypeVocabSize         int     `json:"type_vocab_size"`
	LayerNormEps          float64 `json:"layer_norm_eps"`
	InitializerRange      float64 `json:"initializer_range"`
	// PositionEmbeddingType is "absolute" (or empty, transformers'
	// default); the relative variants of older releases are refused.
	PositionEmbeddingType string `json:"position_embedding_type"`
	// ID2Label names the classes of a sequence classifier; their number is
	// its num_labels (2 when the config has none, transformers' default).
	ID2Label map[string]string `json:"id2label"`
	// ClassifierDropout is the rate before the classifier (0: hidden_dropout_prob).
	ClassifierDropout float64 `json:"classifier_dropout"`
}

// NumLabels returns the number of classes of a sequence classifier.
func (c Config) NumLabels() int {
	if len(c.ID2Label) == 0 {
		return 2
	}
	return len(c.ID2Label)
}

// BaseConfig is bert-base-uncased's configuration (Devlin et al. 2019,
// Table 1's BERT-BASE: 12 layers, 768 wide, 12 heads).
func BaseConfig() Config {
	return Config{VocabSize: 30522, HiddenSize: 768, NumHiddenLayers: 12, NumAttentionHeads: 12,
		IntermediateSize: 3072, HiddenAct: "gelu", HiddenDropoutProb: 0.1, AttentionDropoutProb: 0.1,
		MaxPositionEmbeddings: 512, TypeVocabSize: 2, LayerNormEps: 1e-12, InitializerRange: 0.02}
}

// maxConfigBytes bounds config.json: a BERT config is under 1 KB.
const maxConfigBytes = 1 << 20

// maxParams bounds the parameter count a config may ask for (2³¹ elements,
// 8 GiB of float32, above any BERT released), so that a hostile config
// cannot make New allocate without limit.
const maxParams = 1 << 31

// ReadConfig reads a config.json written by transformers' save_pretrained
// (at most 1 MiB) and validates it.
func ReadConfig(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("bert: read config: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("bert: read config %s: %w", path, err)
	}
	if len(b) > maxConfigBytes {
		return Config{}, fmt.Errorf("bert: config %s is over %d bytes", path, maxConfigBytes)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("bert: config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("bert: config %s: %w", path, err)
	}
	return c, nil
}

// Validate checks that the sizes are positive, that the heads divide the
// hidden size, that the activation and position embeddings are ones the
// encoder implements, and that the parameters fit maxParams.
func (c Config) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{
		{"vocab_size", c.VocabSize}, {"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.NumHiddenLayers},
		{"num_attention_heads", c.NumAttentionHeads}, {"intermediate_size", c.IntermediateSize},
		{"max_position_embeddings", c.MaxPositionEmbeddings}, {"type_vocab_size", c.TypeVocabSize},
	} {
		if f.v <= 0 || f.v > maxParams {
			errs = append(errs, fmt.Errorf("%s=%d, want positive", f.name, f.v))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if c.HiddenSize%c.NumAttentionHeads != 0 {
		errs = append(errs, fmt.Errorf("hidden_size=%d is not a multiple of num_attention_heads=%d", c.HiddenSize, c.NumAttentionHeads))
	}
	if _, err := activation(c.HiddenAct); err != nil {
		errs = append(errs, err)
	}
	if c.PositionEmbeddingType != "" && c.PositionEmbeddingType != "absolute" {
		errs = append(errs, fmt.Errorf("position_embedding_type %q, want absolute", c.PositionEmbeddingType))
	}
	if !(c.LayerNormEps > 0) {
		errs = append(errs, fmt.Errorf("layer_norm_eps=%v, want positive", c.LayerNormEps))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"hidden_dropout_prob", c.HiddenDropoutProb}, {"attention_probs_dropout_prob", c.AttentionDropoutProb}, {"classifier_dropout", c.ClassifierDropout}} {
		if !(p.v >= 0 && p.v < 1) {
			errs = append(errs, fmt.Errorf("%s=%v, want [0, 1)", p.name, p.v))
		}
	}
	if n := c.paramCount(); n > maxParams {
		errs = append(errs, fmt.Errorf("%.0f parameters, more than %d", n, maxParams))
	}
	return errors.Join(errs...)
}

// paramCount returns the number of parameter elements, in float64 so that
// huge sizes do not overflow.
func (c Config) paramCount() float64 {
	h, i, l := float64(c.HiddenSize), float64(c.IntermediateSize), float64(c.NumHiddenLayers)
	emb := (float64(c.VocabSize)+float64(c.MaxPositionEmbeddings)+float64(c.TypeVocabSize))*h + 2*h
	layer := 4*(h*h+h) + 2*h*i + i + h + 4*h
	return emb + l*layer + h*h + h
}
