package transformer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

const start, end = 1, 2 // the test vocabularies' BOS and EOS

// sources are a ragged batch of source sentences.
var sources = [][]int{{5, 9, 3, 7, 11, 4}, {8, 3}, {12, 6, 6, 10}}

func smallModel(t testing.TB, preNorm bool) *Model {
	t.Helper()
	m, err := New(Config{Vocab: 16, DModel: 16, Heads: 4, FF: 32, Layers: 2, MaxLen: 16, PreNorm: preNorm}, tensor.NewRNG(5))
	require.NoError(t, err)
	perturb(t, m, 1, 6)
	m.Out.Bias.Value.SetAt(end, m.Out.Bias.Value.At(end)-4) // longer hypotheses, some still finishing
	return m
}

// decoders returns the cached and the recomputing decoder states over the
// memory of src.
func decoders(t testing.TB, m *Model, src [][]int, maxLen int) (*Cache, *Prefixes) {
	t.Helper()
	memory, lengths := m.Encode(graph.NewEvalTape(), src)
	require.NoError(t, memory.Err())
	c, err := m.NewCache(memory, lengths, maxLen)
	require.NoError(t, err)
	p, err := m.NewPrefixes(memory, lengths)
	require.NoError(t, err)
	return c, p
}

// requireSameHypotheses checks identical token sequences and equal
// log-probabilities within float32 rounding.
func requireSameHypotheses(t testing.TB, want, got []decode.Hypothesis) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.Equal(t, want[i].Tokens, got[i].Tokens, "hypothesis %d", i)
		require.Equal(t, want[i].Finished, got[i].Finished, "hypothesis %d", i)
		require.InDelta(t, want[i].LogProb, got[i].LogProb, 1e-4, "hypothesis %d", i)
	}
}

// The cache's log-probabilities equal the recomputed prefix's at every
// step, for every row.
func TestCachedStepMatchesRecompute(t *testing.T) {
	for _, preNorm := range []bool{false, true} {
		m := smallModel(t, preNorm)
		c, p := decoders(t, m, sources, 8)
		prev := []int{start, start, start}
		for step := range 8 {
			got, nc, err := Step(prev, c)
			require.NoError(t, err)
			want, np, err := StepPrefixes(prev, p)
			require.NoError(t, err)
			for j := range want.Size() {
				require.InDelta(t, want.At(j), got.At(j), 1e-4, "pre-norm %v step %d element %d", preNorm, step, j)
			}
			c, p = nc, np
			prev = []int{(step*3 + 4) % 16, (step*5 + 1) % 16, (step + 7) % 16}
		}
	}
}

// Greedy decoding of each source gives the same tokens with the cache as
// with the prefix recomputed at every step.
func TestGreedyCachedEqualsRecompute(t *testing.T) {
	for _, preNorm := range []bool{false, true} {
		m := smallModel(t, preNorm)
		cfg := decode.Config{Start: start, End: end, MaxLen: 12}
		for i, src := range sources {
			c, p := decoders(t, m, [][]int{src}, cfg.MaxLen)
			want, err := decode.Greedy(StepPrefixes, p, cfg)
			require.NoError(t, err)
			got, err := decode.Greedy(Step, c, cfg)
			require.NoError(t, err)
			require.NotEmpty(t, got.Tokens, "source %d", i)
			requireSameHypotheses(t, []decode.Hypothesis{want}, []decode.Hypothesis{got})
		}
	}
}

// Batched beam search (beam 4, three ragged sources) gives the same
// hypotheses with the cache, whose rows Reorder tiles, permutes and
// drops, as with the prefix recomputed at every step.
func TestBeamSearchCachedEqualsRecompute(t *testing.T) {
	for _, preNorm := range []bool{false, true} {
		m := smallModel(t, preNorm)
		cfg := decode.Config{Start: start, End: end, MaxLen: 12, BeamWidth: 4, Norm: decode.GNMT, Alpha: 0.6}
		c, p := decoders(t, m, sources, cfg.MaxLen)
		want, err := decode.BeamSearchBatch(StepPrefixes, ReorderPrefixes, p, len(sources), cfg)
		require.NoError(t, err)
		got, err := decode.BeamSearchBatch(Step, ReorderCache, c, len(sources), cfg)
		require.NoError(t, err)
		require.Len(t, got, len(sources))
		for s := range want {
			require.Len(t, got[s], cfg.BeamWidth)
			requireSameHypotheses(t, want[s], got[s])
		}
	}
}

// Mistakes come back as errors.
func TestDecodeErrors(t *testing.T) {
	m := smallModel(t, false)
	c, p := decoders(t, m, sources, 4)
	_, _, err := Step([]int{start}, c)
	require.ErrorContains(t, err, "1 tokens for a cache of 3 rows")
	_, _, err = Step([]int{start, 99, start}, c)
	require.ErrorContains(t, err, "token 99 outside the vocabulary of 16")
	_, _, err = StepPrefixes([]int{start}, p)
	require.ErrorContains(t, err, "1 tokens for 3 rows")
	_, err = ReorderCache(c, []int{0, 3})
	require.ErrorContains(t, err, "row 3 of a cache of 3 rows")
	_, err = ReorderPrefixes(p, []int{-1})
	require.ErrorContains(t, err, "row -1 of 3")
	memory, lengths := m.Encode(graph.NewEvalTape(), sources)
	_, err = m.NewCache(memory, lengths, 17)
	require.ErrorContains(t, err, "NewCache of 17 positions; the model has 16")
	_, err = New(Config{Vocab: 16, DModel: 6, Heads: 4, FF: 8, Layers: 1, MaxLen: 4}, tensor.NewRNG(1))
	require.ErrorContains(t, err, "d_model a multiple of heads")
}
