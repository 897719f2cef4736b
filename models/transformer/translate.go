package transformer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/metrics"
	"github.com/plumbml/plumb/text"
)

// Search is how Translate decodes: beam search of BeamWidth hypotheses
// (1: greedy) of at most MaxLen tokens, and at most twice the batch's
// longest source plus 10 (fairseq's max_len_a and max_len_b), ranked by GNMT's length penalty
// lp(Y) = ((5 + |Y|)/6)^Alpha (Wu et al. 2016, eq. 14; Alpha 0: the plain
// log-probability), over the key/value cache.
type Search struct {
	BeamWidth, MaxLen int
	Alpha             float64
}

// Translate decodes every source of src (subword ids without the end mark)
// at once over the key/value cache (decode.BeamSearchBatch, cache rows
// reordered as beams are pruned) and returns each one's best hypothesis
// as ids, without the end mark. The model must not be training.
func (m *Model) Translate(src [][]int, s Search) ([][]int, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if len(src) == 0 {
		return nil, errors.New("transformer: Translate: no sources")
	}
	if s.BeamWidth < 1 || s.MaxLen < 1 || s.Alpha < 0 {
		return nil, fmt.Errorf("transformer: Translate: beam %d, max length %d, alpha %v; want positive, positive and >= 0", s.BeamWidth, s.MaxLen, s.Alpha)
	}
	withEnd := make([][]int, len(src))
	longest := 0
	for i, ids := range src {
		withEnd[i] = append(append(make([]int, 0, len(ids)+1), ids...), endID)
		longest = max(longest, len(withEnd[i]))
	}
	t := graph.NewEvalTape()
	defer t.Release()
	memory, lengths := m.Encode(t, withEnd)
	if err := memory.Err(); err != nil {
		return nil, fmt.Errorf("transformer: Translate: %w", err)
	}
	maxLen := min(s.MaxLen, 2*longest+10, m.Cfg.MaxLen)
	cache, err := m.NewCache(memory, lengths, maxLen)
	if err != nil {
		return nil, err
	}
	cfg := decode.Config{Start: startID, End: endID, MaxLen: maxLen, BeamWidth: s.BeamWidth, Norm: decode.GNMT, Alpha: s.Alpha}
	hyps, err := decode.BeamSearchBatch(Step, ReorderCache, cache, len(src), cfg)
	if err != nil {
		return nil, fmt.Errorf("transformer: Translate: %w", err)
	}
	out := make([][]int, len(hyps))
	for i, h := range hyps {
		toks := h[0].Tokens
		if h[0].Finished {
			toks = toks[:len(toks)-1]
		}
		out[i] = toks
	}
	return out, nil
}

// BLEU translates the sources in batches of batch sentences and scores
// the detokenised words against refs (one reference a sentence) with
// corpus BLEU-4 (metrics.BLEU, sacreBLEU's).
func (m *Model) BLEU(bpe *text.BPE, src [][]int, refs []string, s Search, batch int) (metrics.BLEUScore, []string, error) {
	if bpe == nil || len(src) != len(refs) || batch < 1 {
		return metrics.BLEUScore{}, nil, fmt.Errorf("transformer: BLEU of %d sources against %d references in batches of %d (BPE given: %v)", len(src), len(refs), batch, bpe != nil)
	}
	var hyps []string
	for i := 0; i < len(src); i += batch {
		out, err := m.Translate(src[i:min(i+batch, len(src))], s)
		if err != nil {
			return metrics.BLEUScore{}, nil, err
		}
		for _, ids := range out {
			words, err := bpe.Decode(ids)
			if err != nil {
				return metrics.BLEUScore{}, nil, err
			}
			hyps = append(hyps, strings.Join(words, " "))
		}
	}
	rs := make([][]string, len(refs))
	for i, r := range refs {
		rs[i] = []string{r}
	}
	score, err := metrics.BLEU(hyps, rs)
	return score, hyps, err
}
