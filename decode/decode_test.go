package decode

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

const end = 0 // the toy models' End token

// historyModel is a toy decoder whose next-token distribution is a fixed
// pseudo-random function of the whole prefix, so a wrong Reorder shows up.
// The state is each hypothesis's prefix.
type historyModel struct{ v int }

func (m historyModel) logProbs(prefix []int) []float64 {
	h := fnv.New64a()
	fmt.Fprint(h, prefix)
	rng := tensor.NewRNG(h.Sum64())
	logits := make([]float64, m.v)
	for j := range logits {
		logits[j] = 2 * rng.NormFloat64()
	}
	lse := 0.0
	for _, l := range logits {
		lse += math.Exp(l)
	}
	for j := range logits {
		logits[j] -= math.Log(lse)
	}
	return logits
}

func (m historyModel) step(prev []int, state [][]int) (*tensor.Tensor, [][]int, error) {
	var data []float64
	next := make([][]int, len(prev))
	for i, p := range prev {
		next[i] = append(slices.Clone(state[i]), p)
		data = append(data, m.logProbs(next[i])...)
	}
	return tensor.MustFromSlice(data, len(prev), m.v), next, nil
}

func reorderRows(state [][]int, parents []int) ([][]int, error) {
	out := make([][]int, len(parents))
	for i, p := range parents {
		out[i] = state[p]
	}
	return out, nil
}

// bruteForce scores every sequence that ends at End or at maxLen tokens.
func bruteForce(m historyModel, cfg Config) []Hypothesis {
	var all []Hypothesis
	var walk func(prefix, toks []int, lp float64)
	walk = func(prefix, toks []int, lp float64) {
		row := m.logProbs(prefix)
		for tok, l := range row {
			h := Hypothesis{Tokens: append(slices.Clone(toks), tok), LogProb: lp + l, Finished: tok == end}
			if h.Finished || len(h.Tokens) == cfg.MaxLen {
				h.Score = cfg.score(h.LogProb, len(h.Tokens))
				all = append(all, h)
				continue
			}
			walk(append(slices.Clone(prefix), tok), h.Tokens, h.LogProb)
		}
	}
	walk([]int{cfg.Start}, nil, 0)
	slices.SortStableFunc(all, func(a, b Hypothesis) int {
		if a.Score > b.Score {
			return -1
		}
		if a.Score < b.Score {
			return 1
		}
		return 0
	})
	return all
}

// A beam wide enough to keep every hypothesis is exhaustive: it must find
// the brute-force best under every length normalisation.
func TestExhaustiveBeamEqualsBruteForce(t *testing.T) {
	m := historyModel{v: 4}
	for _, norm := range []struct {
		n     LengthNorm
		alpha float64
	}{{NoNorm, 0}, {Average, 0}, {GNMT, 0.6}, {GNMT, 1}} {
		cfg := Config{Start: 3, End: end, MaxLen: 4, BeamWidth: 256, Norm: norm.n, Alpha: norm.alpha}
		want := bruteForce(m, cfg)
		got, err := BeamSearch(m.step, reorderRows, [][]int{{}}, cfg)
		require.NoError(t, err)
		require.Equal(t, want[0].Tokens, got[0].Tokens, "norm %v", norm)
		require.InDelta(t, want[0].Score, got[0].Score, 1e-12)
		require.InDelta(t, want[0].LogProb, got[0].LogProb, 1e-12)
		require.Equal(t, want[0].Finished, got[0].Finished)
	}
}

func TestBeamWidthOneEqualsGreedy(t *testing.T) {
	for v := 3; v < 8; v++ {
		m := historyModel{v: v}
		cfg := Config{Start: 1, End: end, MaxLen: 6, BeamWidth: 1, Norm: GNMT, Alpha: 0.7}
		g, err := Greedy(m.step, [][]int{{}}, cfg)
		require.NoError(t, err)
		b, err := BeamSearch(m.step, reorderRows, [][]int{{}}, cfg)
		require.NoError(t, err)
		require.Len(t, b, 1)
		require.Equal(t, g, b[0], "V=%d", v)
	}
}

// table is a first-order toy model: row p of logp gives the next-token
// log-probabilities after token p; the state is unused.
func table(logp [][]float64) Step[struct{}] {
	return func(prev []int, s struct{}) (*tensor.Tensor, struct{}, error) {
		var data []float64
		for _, p := range prev {
			data = append(data, logp[p]...)
		}
		return tensor.MustFromSlice(data, len(prev), len(logp[0])), s, nil
	}
}

func keep(s struct{}, _ []int) (struct{}, error) { return s, nil }

// Greedy takes a (0.6) then is stuck with 0.5·0.5; the beam finds b (0.4)
// then End (0.99): the known best path b, End.
func TestBeamFindsWhatGreedyMisses(t *testing.T) {
	l := math.Log
	step := table([][]float64{
		{0, math.Inf(-1), math.Inf(-1), math.Inf(-1)}, // after End (never used)
		{l(0.5), l(0.5), l(1e-9), l(1e-9)},            // after a
		{l(0.99), l(0.005), l(0.005), l(1e-9)},        // after b
		{l(1e-9), l(0.6), l(0.4), l(1e-9)},            // after Start (3)
	})
	cfg := Config{Start: 3, End: end, MaxLen: 5, BeamWidth: 2}
	g, err := Greedy(step, struct{}{}, cfg)
	require.NoError(t, err)
	require.Equal(t, []int{1, 0}, g.Tokens)
	require.InDelta(t, l(0.6*0.5), g.LogProb, 1e-12)
	hs, err := BeamSearch(step, keep, struct{}{}, cfg)
	require.NoError(t, err)
	require.Len(t, hs, 2)
	require.Equal(t, []int{2, 0}, hs[0].Tokens)
	require.True(t, hs[0].Finished)
	require.InDelta(t, l(0.4*0.99), hs[0].Score, 1e-12)
	require.Equal(t, []int{1, 0}, hs[1].Tokens)
}

// Without End in reach, hypotheses stop unfinished at MaxLen; Average
// normalisation prefers a long likely path over a short unlikely one.
func TestMaxLenAndAverage(t *testing.T) {
	l := math.Log
	step := table([][]float64{
		{0, math.Inf(-1)},
		{l(0.3), l(0.7)},
	})
	cfg := Config{Start: 1, End: end, MaxLen: 3, BeamWidth: 3, Norm: Average}
	hs, err := BeamSearch(step, keep, struct{}{}, cfg)
	require.NoError(t, err)
	require.Equal(t, []int{1, 1, 1}, hs[0].Tokens)
	require.False(t, hs[0].Finished)
	require.InDelta(t, l(0.7), hs[0].Score, 1e-12)
	g, err := Greedy(step, struct{}{}, cfg)
	require.NoError(t, err)
	require.Equal(t, hs[0], g)
}

func TestDecodeErrors(t *testing.T) {
	m := historyModel{v: 3}
	ok := Config{Start: 1, End: end, MaxLen: 3, BeamWidth: 2}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{End: end, MaxLen: 0, BeamWidth: 2}, "decode: MaxLen 0 must be positive"},
		{Config{End: end, MaxLen: 2}, "decode: BeamWidth 0 must be positive"},
		{Config{End: -1, MaxLen: 2, BeamWidth: 1}, "decode: End token -1 must not be negative"},
		{Config{End: 3, MaxLen: 2, BeamWidth: 1}, "decode: step returned log-probabilities float64[1 3], want float [1, V] with V > End (3)"},
		{Config{End: 0, MaxLen: 2, BeamWidth: 1, Norm: 7}, "decode: unknown LengthNorm 7"},
	} {
		_, err := BeamSearch(m.step, reorderRows, [][]int{{}}, c.cfg)
		require.ErrorContains(t, err, c.want)
	}
	_, err := BeamSearch(m.step, nil, [][]int{{}}, ok)
	require.ErrorContains(t, err, "decode: BeamSearch needs a Reorder function")
	bad := func(prev []int, s struct{}) (*tensor.Tensor, struct{}, error) { return nil, s, nil }
	_, err = Greedy(bad, struct{}{}, ok)
	require.ErrorContains(t, err, "decode: step returned log-probabilities nil, want float [1, V]")
	fails := func(prev []int, s struct{}) (*tensor.Tensor, struct{}, error) {
		return nil, s, fmt.Errorf("model broke")
	}
	_, err = BeamSearch(fails, keep, struct{}{}, ok)
	require.ErrorContains(t, err, "model broke")
	_, err = Greedy(fails, struct{}{}, ok)
	require.ErrorContains(t, err, "model broke")
	_, err = Greedy(table([][]float64{{0, 0}, {0, 0}}), struct{}{}, Config{MaxLen: -1})
	require.ErrorContains(t, err, "decode: MaxLen -1 must be positive")
}

// Decoding several sources in one batch gives each source what decoding
// it alone gives, and the batch shrinks as sources finish.
func TestBeamSearchBatchEqualsOneByOne(t *testing.T) {
	m := historyModel{v: 5}
	for _, width := range []int{1, 2, 3} {
		cfg := Config{Start: 3, End: end, MaxLen: 6, BeamWidth: width, Norm: GNMT, Alpha: 0.6}
		starts := [][]int{{7}, {8}, {9}, {10}}
		var rows []int
		step := func(prev []int, state [][]int) (*tensor.Tensor, [][]int, error) {
			rows = append(rows, len(prev))
			return m.step(prev, state)
		}
		got, err := BeamSearchBatch(step, reorderRows, starts, len(starts), cfg)
		require.NoError(t, err)
		require.Len(t, got, len(starts))
		for s, st := range starts {
			want, err := BeamSearch(m.step, reorderRows, [][]int{st}, cfg)
			require.NoError(t, err)
			require.Equal(t, want, got[s], "width %d source %d", width, s)
		}
		require.Equal(t, len(starts), rows[0])
		require.LessOrEqual(t, slices.Max(rows), len(starts)*width)
	}
	_, err := BeamSearchBatch(m.step, reorderRows, [][]int{{}}, 0, Config{End: end, MaxLen: 2, BeamWidth: 2})
	require.ErrorContains(t, err, "decode: BeamSearchBatch of 0 sources; want at least 1")
}

// refTop is topCandidates without the vector skip: every extension is
// compared with the n-th best held.
func refTop[T tensor.Float](alive []Hypothesis, rows []T, v, n int) []candidate {
	var best []candidate
	for i := range alive {
		for j, x := range rows[i*v : (i+1)*v] {
			lp := alive[i].LogProb + float64(x)
			if len(best) == n && !(lp > best[n-1].logProb) {
				continue
			}
			at := len(best)
			for at > 0 && lp > best[at-1].logProb {
				at--
			}
			best = slices.Insert(best, at, candidate{parent: i, token: j, logProb: lp})
			best = best[:min(len(best), n)]
		}
	}
	return best
}

// The vector skip of topCandidates drops only what the exact comparison
// drops: the same candidates as refTop on float32 and float64 rows with
// ties, NaN and -Inf entries, hypotheses far from 0 and at -Inf, for
// several n and vocabulary sizes.
func TestTopCandidatesSkipChangesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, v := range []int{1, 7, 8, 33, 1000} {
		for _, n := range []int{1, 3, 8} {
			for _, bases := range [][]float64{{0, -0.5, -2}, {-1e6, -1e6 - 1e-3, -1e6 + 2}, {-3, math.Inf(-1), -1}} {
				alive := make([]Hypothesis, len(bases))
				for i, b := range bases {
					alive[i].LogProb = b
				}
				rows := make([]float64, len(bases)*v)
				for k := range rows {
					rows[k] = -rng.ExpFloat64() * 5
					if k%2 == 0 {
						rows[k] = math.Round(rows[k]*8) / 8 // ties among the steps of 1/8
					}
					switch k % 97 {
					case 13:
						rows[k] = math.NaN()
					case 29:
						rows[k] = math.Inf(-1)
					}
				}
				rows32 := make([]float32, len(rows))
				for k, x := range rows {
					rows32[k] = float32(x)
				}
				name := fmt.Sprintf("v=%d n=%d bases=%v", v, n, bases)
				// compared as text: a NaN candidate equals itself there
				require.Equal(t, fmt.Sprint(refTop(alive, rows, v, n)), fmt.Sprint(topCandidates(alive, rows, v, n)), name)
				require.Equal(t, fmt.Sprint(refTop(alive, rows32, v, n)), fmt.Sprint(topCandidates(alive, rows32, v, n)), name)
			}
		}
	}
}
