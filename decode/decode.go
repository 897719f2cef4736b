// Package decode turns a model that scores one next token at a time (the
// decoder of a seq2seq model, a language model) into output sequences, by
// greedy decoding or beam search.
//
// It lives outside ops because it is a search over calls of the model, not
// an op on tensors: it records nothing on a tape and has no gradient. The
// model is a Step function that, given the last token of each live
// hypothesis and the decoder state for them, returns log-probabilities
// [hypotheses, V] of the next token (the output of graph.LogSoftmax on an
// inference tape, say) and the new state. Beam search also needs a Reorder
// function that selects rows of the state for the surviving hypotheses
// (fairseq's reorder_incremental_state; a gather along the batch axis of
// each state tensor). One call decodes one source; the hypotheses of a
// beam are the batch the Step sees.
package decode

import (
	"fmt"
	"math"
	"slices"

	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// Step scores the next token for n live hypotheses: prev[i] is hypothesis
// i's last token (Config.Start at the first step) and state the decoder
// state for the n hypotheses in that order. It returns log-probabilities
// [n, V] (float32 or float64) and the state after consuming prev.
type Step[S any] func(prev []int, state S) (logProbs *tensor.Tensor, next S, err error)

// Reorder returns the state of the hypotheses parents[0], parents[1], ...
// of state, in that order (a parent may repeat or vanish).
type Reorder[S any] func(state S, parents []int) (S, error)

// LengthNorm says how a finished hypothesis's log-probability is
// normalised by its length before hypotheses are ranked.
type LengthNorm int

// The length normalisations.
const (
	// NoNorm ranks by the plain sum of log-probabilities.
	NoNorm LengthNorm = iota
	// Average divides by the length (the mean log-probability per token).
	Average
	// GNMT divides by ((5 + length)/6)^Alpha, the length penalty of Wu et
	// al. 2016 (Google's NMT; tf-addons' BeamSearchDecoder length_penalty_weight).
	GNMT
)

// Config sets up a decoding.
type Config struct {
	Start     int        // the token fed as prev at the first step (BOS)
	End       int        // the token that ends a hypothesis (EOS); it must be < V
	MaxLen    int        // the most tokens a hypothesis generates, End included
	BeamWidth int        // hypotheses kept per step (BeamSearch only)
	Norm      LengthNorm // how scores are normalised by length
	Alpha     float64    // GNMT's exponent (0.6 to 1.0 in the paper)
}

// Hypothesis is one decoded sequence.
type Hypothesis struct {
	Tokens   []int   // the generated tokens, without Start; ending with End if Finished
	LogProb  float64 // Σ log P(token | prefix)
	Score    float64 // LogProb normalised by the Config's LengthNorm
	Finished bool    // whether it ended with End (else it reached MaxLen)
}

// score normalises logProb over n tokens.
func (c Config) score(logProb float64, n int) float64 {
	switch c.Norm {
	case Average:
		return logProb / float64(max(n, 1))
	case GNMT:
		return logProb / math.Pow((5+float64(n))/6, c.Alpha)
	}
	return logProb
}

func (c Config) check(beam bool) error {
	switch {
	case c.MaxLen < 1:
		return fmt.Errorf("decode: MaxLen %d must be positive", c.MaxLen)
	case beam && c.BeamWidth < 1:
		return fmt.Errorf("decode: BeamWidth %d must be positive", c.BeamWidth)
	case c.End < 0:
		return fmt.Errorf("decode: End token %d must not be negative", c.End)
	case c.Norm < NoNorm || c.Norm > GNMT:
		return fmt.Errorf("decode: unknown LengthNorm %d", c.Norm)
	}
	return nil
}

// scores checks that Step returned log-probabilities [n, V] with End < V
// and returns them as they lie.
func (c Config) scores(lp *tensor.Tensor, n int) (logProbRows, error) {
	if lp == nil || !lp.DType().IsFloat() || lp.Rank() != 2 || lp.Dim(0) != n || lp.Dim(1) <= c.End {
		var got any = "nil"
		if lp != nil {
			got = fmt.Sprintf("%v%v", lp.DType(), lp.Shape())
		}
		return logProbRows{}, fmt.Errorf("decode: step returned log-probabilities %v, want float [%d, V] with V > End (%d)", got, n, c.End)
	}
	if lp.DType() == tensor.Float64 {
		return logProbRows{f64: lp.Float64s(), v: lp.Dim(1)}, nil
	}
	return logProbRows{f32: lp.Float32s(), v: lp.Dim(1)}, nil
}

// logProbRows is a step's log-probabilities [n, V], float32 or float64,
// read in their own type (a float32 widens exactly to float64 as it is read).
type logProbRows struct {
	f32 []float32
	f64 []float64
	v   int
}

// top returns the n best extensions of alive, whose rows start at row
// first (see topCandidates).
func (r logProbRows) top(alive []Hypothesis, first, n int) []candidate {
	if r.f64 != nil {
		return topCandidates(alive, r.f64[first*r.v:(first+len(alive))*r.v], r.v, n)
	}
	return topCandidates(alive, r.f32[first*r.v:(first+len(alive))*r.v], r.v, n)
}

// Greedy decodes by taking the most likely next token (the lower token on
// ties) until End or MaxLen tokens.
func Greedy[S any](step Step[S], state S, cfg Config) (Hypothesis, error) {
	if err := cfg.check(false); err != nil {
		return Hypothesis{}, err
	}
	h, prev := Hypothesis{}, cfg.Start
	for len(h.Tokens) < cfg.MaxLen && !h.Finished {
		lp, next, err := step([]int{prev}, state)
		if err != nil {
			return Hypothesis{}, err
		}
		rows, err := cfg.scores(lp, 1)
		if err != nil {
			return Hypothesis{}, err
		}
		best := rows.top([]Hypothesis{h}, 0, 1)[0] // the most likely, the lower token on ties
		tok := best.token
		h.Tokens = append(h.Tokens, tok)
		h.LogProb = best.logProb
		h.Finished = tok == cfg.End
		prev, state = tok, next
	}
	h.Score = cfg.score(h.LogProb, len(h.Tokens))
	return h, nil
}

// candidate is one extension of a live hypothesis by one token.
type candidate struct {
	parent, token int
	logProb       float64
}

// BeamSearch keeps the BeamWidth most likely live hypotheses (by plain
// log-probability) at each step and returns up to BeamWidth hypotheses,
// best first by Score. At each step it ranks every extension of every live
// hypothesis by one token (top-k over hypotheses × V, ties to the lower
// hypothesis, then the lower token); the extensions by End among the first
// BeamWidth finish, and the best BeamWidth others stay live (as fairseq's
// search does). It stops once BeamWidth hypotheses have finished, none is
// live, or MaxLen tokens have been generated; the hypotheses still live at
// MaxLen are returned unfinished. With BeamWidth 1 it returns what Greedy
// does. It is BeamSearchBatch over one source.
func BeamSearch[S any](step Step[S], reorder Reorder[S], state S, cfg Config) ([]Hypothesis, error) {
	out, err := BeamSearchBatch(step, reorder, state, 1, cfg)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// BeamSearchBatch runs BeamSearch on sources sources at once: state holds
// one row per source at the start, and each call of step scores the live
// hypotheses of every source together, source by source in source order
// (so the model runs one batch of up to sources × BeamWidth rows per
// step instead of one small batch per source). Each source's search is
// BeamSearch's, independent of the others; a source that is done drops
// out of the batch. It returns each source's hypotheses, best first.
func BeamSearchBatch[S any](step Step[S], reorder Reorder[S], state S, sources int, cfg Config) ([][]Hypothesis, error) {
	if err := cfg.check(true); err != nil {
		return nil, err
	}
	if reorder == nil {
		return nil, fmt.Errorf("decode: BeamSearch needs a Reorder function")
	}
	if sources < 1 {
		return nil, fmt.Errorf("decode: BeamSearchBatch of %d sources; want at least 1", sources)
	}
	k := cfg.BeamWidth
	alive, done := make([][]Hypothesis, sources), make([][]Hypothesis, sources)
	stopped := make([]bool, sources) // BeamWidth hypotheses finished
	prev := make([]int, sources)
	for s := range alive {
		alive[s], prev[s] = []Hypothesis{{}}, cfg.Start
	}
	for t := 0; t < cfg.MaxLen && len(prev) > 0; t++ {
		lp, next, err := step(prev, state)
		if err != nil {
			return nil, err
		}
		rows, err := cfg.scores(lp, len(prev))
		if err != nil {
			return nil, err
		}
		var parents []int
		base := 0
		prev = make([]int, 0, len(prev)) // a new slice: step may keep the last one
		for s, hyps := range alive {
			if len(hyps) == 0 || stopped[s] {
				continue
			}
			var live []Hypothesis
			var from []int
			for r, c := range rows.top(hyps, base, 2*k) {
				h := Hypothesis{Tokens: append(slices.Clone(hyps[c.parent].Tokens), c.token), LogProb: c.logProb}
				switch {
				case c.token == cfg.End && r < k:
					h.Finished = true
					done[s] = append(done[s], h)
				case c.token != cfg.End && len(live) < k:
					live = append(live, h)
					from = append(from, base+c.parent)
				}
			}
			base += len(hyps)
			alive[s] = live
			if len(done[s]) >= k { // this source is decoded: its live ones are only ranked
				stopped[s] = true
				continue
			}
			parents = append(parents, from...)
			for _, h := range live {
				prev = append(prev, h.Tokens[len(h.Tokens)-1])
			}
		}
		if len(prev) > 0 {
			if state, err = reorder(next, parents); err != nil {
				return nil, err
			}
		}
	}
	out := make([][]Hypothesis, sources)
	for s := range out {
		out[s] = finish(append(done[s], alive[s]...), cfg)
	}
	return out, nil
}

// finish scores the hypotheses and returns the best BeamWidth, best
// first (stable: among equal scores, finished before unfinished, in the
// order they were found).
func finish(hyps []Hypothesis, cfg Config) []Hypothesis {
	for i := range hyps {
		hyps[i].Score = cfg.score(hyps[i].LogProb, len(hyps[i].Tokens))
	}
	slices.SortStableFunc(hyps, func(a, b Hypothesis) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return hyps[:min(cfg.BeamWidth, len(hyps))]
}

// topCandidates returns the n best extensions of the hypotheses by one
// token, best first, from their log-probabilities rows [len(alive), v];
// ties go to the lower hypothesis, then the lower token.
func topCandidates[T tensor.Float](alive []Hypothesis, rows []T, v, n int) []candidate {
	best := make([]candidate, 0, min(n, len(rows))+1)
	full, floor := false, 0.0 // once n are held, a candidate must beat floor, the n-th best
	for i := range alive {
		base, row := alive[i].LogProb, rows[i*v:(i+1)*v]
		for j := 0; j < len(row); j++ {
			if full { // skip, eight at a time, what cannot beat floor
				if j += vec.IndexAbove(row[j:], below[T](floor, base)); j == len(row) {
					break
				}
			}
			lp := base + float64(row[j])
			if full && !(lp > floor) {
				continue
			}
			at := len(best)
			for at > 0 && lp > best[at-1].logProb {
				at--
			}
			best = slices.Insert(best, at, candidate{parent: i, token: j, logProb: lp})
			if len(best) > n {
				best = best[:n]
			}
			full = len(best) == n
			if full {
				floor = best[n-1].logProb
			}
		}
	}
	return best
}

// below returns a T under which no log-probability x can make base + x
// beat floor: floor - base less a margin for the roundings of that sum and
// of the conversion to T, so the vector skip only drops what the exact
// comparison would. Infinities and NaN pass as they are (the exact
// comparison then drops the same).
func below[T tensor.Float](floor, base float64) T {
	d := floor - base
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return T(d)
	}
	return T(d - 1e-6*(math.Abs(d)+math.Abs(base)+math.Abs(floor)) - 1e-30)
}
