package transformer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// The KV-cache bar's decoder: 3 layers, d_model 256, 8 heads (FF 1024), a
// shared vocabulary of 8,000 subwords, random weights from a fixed seed,
// decoding 45 tokens from a 24-token source. End's output bias is pushed
// down so that every hypothesis runs all 45 steps in both ways.
const benchTokens = 45

func benchModel(t testing.TB, sources int) (*Model, *graph.Value, []int) {
	t.Helper()
	m, err := New(Config{Vocab: 8000, DModel: 256, Heads: 8, FF: 1024, Layers: 3, MaxLen: 64}, tensor.NewRNG(36))
	require.NoError(t, err)
	perturb(t, m, 0.05, 37)
	m.Out.Bias.Value.SetAt(end, -1e4)
	src := make([][]int, sources) // source s has 24-s%5 tokens
	for s := range src {
		src[s] = make([]int, 24-s%5)
		for i := range src[s] {
			src[s][i] = 3 + (i*131+s*977+17)%7990
		}
	}
	memory, lengths := m.Encode(graph.NewEvalTape(), src)
	require.NoError(t, memory.Err())
	return m, memory, lengths
}

// benchDecoders are greedy and beam-4 decoding with the cache and with
// the prefix recomputed, each from the encoded sources: decode.Greedy for
// one source, decode.BeamSearchBatch with beam 1 (which returns what
// Greedy does) for a batch.
func benchDecoders(t testing.TB, m *Model, memory *graph.Value, lengths []int) map[string]func() ([]decode.Hypothesis, error) {
	cfg := decode.Config{Start: start, End: end, MaxLen: benchTokens, BeamWidth: 4, Norm: decode.GNMT, Alpha: 0.6}
	cached := func() *Cache {
		c, err := m.NewCache(memory, lengths, benchTokens)
		require.NoError(t, err)
		return c
	}
	prefixes := func() *Prefixes {
		p, err := m.NewPrefixes(memory, lengths)
		require.NoError(t, err)
		return p
	}
	sources := len(lengths)
	greedy := cfg
	greedy.BeamWidth = 1
	flat := func(hs [][]decode.Hypothesis, err error) ([]decode.Hypothesis, error) {
		var out []decode.Hypothesis
		for _, h := range hs {
			out = append(out, h...)
		}
		return out, err
	}
	if sources == 1 {
		one := func(h decode.Hypothesis, err error) ([]decode.Hypothesis, error) { return []decode.Hypothesis{h}, err }
		return map[string]func() ([]decode.Hypothesis, error){
			"greedy/cached":    func() ([]decode.Hypothesis, error) { return one(decode.Greedy(Step, cached(), cfg)) },
			"greedy/recompute": func() ([]decode.Hypothesis, error) { return one(decode.Greedy(StepPrefixes, prefixes(), cfg)) },
			"beam4/cached":     func() ([]decode.Hypothesis, error) { return decode.BeamSearch(Step, ReorderCache, cached(), cfg) },
			"beam4/recompute": func() ([]decode.Hypothesis, error) {
				return decode.BeamSearch(StepPrefixes, ReorderPrefixes, prefixes(), cfg)
			},
		}
	}
	return map[string]func() ([]decode.Hypothesis, error){
		"greedy/cached": func() ([]decode.Hypothesis, error) {
			return flat(decode.BeamSearchBatch(Step, ReorderCache, cached(), sources, greedy))
		},
		"greedy/recompute": func() ([]decode.Hypothesis, error) {
			return flat(decode.BeamSearchBatch(StepPrefixes, ReorderPrefixes, prefixes(), sources, greedy))
		},
		"beam4/cached": func() ([]decode.Hypothesis, error) {
			return flat(decode.BeamSearchBatch(Step, ReorderCache, cached(), sources, cfg))
		},
		"beam4/recompute": func() ([]decode.Hypothesis, error) {
			return flat(decode.BeamSearchBatch(StepPrefixes, ReorderPrefixes, prefixes(), sources, cfg))
		},
	}
}

// The bar's decoder gives the same 45-token hypotheses with the cache as
// with the prefix recomputed, greedy and beam 4.
func TestBenchDecoderCachedEqualsRecompute(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 45 tokens with a 256-wide model")
	}
	m, memory, lengths := benchModel(t, 1)
	run := benchDecoders(t, m, memory, lengths)
	for _, mode := range []string{"greedy", "beam4"} {
		want, err := run[mode+"/recompute"]()
		require.NoError(t, err)
		got, err := run[mode+"/cached"]()
		require.NoError(t, err)
		for _, h := range got {
			require.Len(t, h.Tokens, benchTokens)
		}
		requireSameHypotheses(t, want, got)
	}
}

// BenchmarkDecode times greedy and beam-4 decoding of 45 tokens, for one
// source and for a batch of 8 ragged sources, with the KV cache (NewCache
// included: the memory's projection once per source) and with the prefix
// recomputed at every step. Each pair first checks that both ways give
// the same token sequences.
func BenchmarkDecode(b *testing.B) {
	for _, sources := range []int{1, 8} {
		b.Run(fmt.Sprintf("batch%d", sources), func(b *testing.B) {
			m, memory, lengths := benchModel(b, sources)
			run := benchDecoders(b, m, memory, lengths)
			for _, mode := range []string{"greedy", "beam4"} {
				want, err := run[mode+"/recompute"]()
				require.NoError(b, err)
				got, err := run[mode+"/cached"]()
				require.NoError(b, err)
				requireSameHypotheses(b, want, got)
				for _, way := range []string{"cached", "recompute"} {
					f := run[mode+"/"+way]
					b.Run(mode+"/"+way, func(b *testing.B) {
						for b.Loop() {
							if _, err := f(); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		})
	}
}
