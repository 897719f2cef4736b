package bert

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/tensor"
)

// MaskConfig is the masked-language-model corruption (Devlin et al. 2019,
// section 3.1 and appendix A.1; transformers'
// DataCollatorForLanguageModeling): each token that is not special is
// chosen with probability Prob (0: 0.15); a chosen token becomes MaskID
// with probability 0.8, a token drawn uniformly from [0, VocabSize) with
// probability 0.1, and stays itself otherwise. Special (e.g. [CLS],
// [SEP], [PAD]) tells the tokens never chosen.
type MaskConfig struct {
	Prob      float64
	MaskID    int
	VocabSize int
	Special   func(id int) bool
}

// Masked is a batch corrupted for masked-LM training: Batch holds the
// corrupted ids (and the caller's token types and mask), Rows the flat
// positions b·T + t of the chosen tokens (for MaskedLM.Logits) and Labels
// their original ids, both [n] int64.
type Masked struct {
	Batch        Batch
	Rows, Labels *tensor.Tensor
}

// MaskTokens corrupts b's ids by cfg's rule, drawing from rng. Positions
// whose attention mask is 0 (padding) are never chosen. A batch in which
// no token is chosen gets one chosen token, the first non-special one, so
// that the loss is defined; a batch with none at all is an error.
func MaskTokens(b Batch, cfg MaskConfig, rng *rand.Rand) (Masked, error) {
	if rng == nil {
		return Masked{}, errors.New("bert: MaskTokens needs a random source")
	}
	prob := cfg.Prob
	if prob == 0 {
		prob = 0.15
	}
	if !(prob > 0 && prob <= 1) || cfg.VocabSize <= 0 || cfg.MaskID < 0 || cfg.MaskID >= cfg.VocabSize {
		return Masked{}, fmt.Errorf("bert: MaskTokens: prob %v, mask id %d, vocabulary %d: want prob in (0, 1] and the mask id in [0, vocabulary)", cfg.Prob, cfg.MaskID, cfg.VocabSize)
	}
	if b.IDs == nil || b.IDs.Rank() != 2 || (b.IDs.DType() != tensor.Int32 && b.IDs.DType() != tensor.Int64) {
		return Masked{}, errors.New("bert: MaskTokens: want IDs [B, T] int32 or int64")
	}
	if b.AttentionMask != nil && !b.AttentionMask.Shape().Equal(b.IDs.Shape()) {
		return Masked{}, fmt.Errorf("bert: MaskTokens: attention mask %v for IDs %v", b.AttentionMask.Shape(), b.IDs.Shape())
	}
	ids, err := b.IDs.Cast(tensor.Int64)
	if err != nil {
		return Masked{}, err
	}
	if ids == b.IDs { // Cast returns an int64 tensor itself: the caller's ids are not written
		ids = ids.Clone()
	}
	out := ids.Int64s()
	eligible := func(i int) bool {
		return (b.AttentionMask == nil || b.AttentionMask.At(i) != 0) && (cfg.Special == nil || !cfg.Special(int(out[i])))
	}
	var rows, labels []int64
	choose := func(i int) {
		rows, labels = append(rows, int64(i)), append(labels, out[i])
		switch r := rng.Float64(); {
		case r < 0.8:
			out[i] = int64(cfg.MaskID)
		case r < 0.9:
			out[i] = int64(rng.IntN(cfg.VocabSize))
		}
	}
	first := -1
	for i := range out {
		if !eligible(i) {
			continue
		}
		if first < 0 {
			first = i
		}
		if rng.Float64() < prob {
			choose(i)
		}
	}
	if len(rows) == 0 {
		if first < 0 {
			return Masked{}, errors.New("bert: MaskTokens: the batch has no token to mask")
		}
		choose(first)
	}
	nb := b
	nb.IDs = ids
	return Masked{Batch: nb, Rows: tensor.MustFromSlice(rows, len(rows)), Labels: tensor.MustFromSlice(labels, len(labels))}, nil
}
