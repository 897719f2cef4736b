package transformer

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/text"
	"github.com/plumbml/plumb/train"
)

// lexicon is the toy task's dictionary: each English word has one German
// word, and a sentence translates word by word in the same order.
var lexicon = map[string]string{
	"the": "der", "red": "rote", "dog": "hund", "runs": "läuft", "cat": "katze", "sleeps": "schläft",
	"small": "kleine", "bird": "vogel", "sings": "singt", "big": "große",
}

// writeToy writes a Multi30k folder of n training pairs (and 40
// validation and 40 test pairs) of the toy task under a temporary root,
// gzip-compressed as the real files are.
func writeToy(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "multi30k"), 0o755))
	words := make([]string, 0, len(lexicon))
	for w := range lexicon {
		words = append(words, w)
	}
	slices.Sort(words)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, split := range []struct {
		name string
		n    int
	}{{"train", n}, {"val", 40}, {"test_2016_flickr", 40}} {
		var en, de strings.Builder
		for range split.n {
			var e, g []string
			for range 2 + rng.IntN(5) {
				w := words[rng.IntN(len(words))]
				e, g = append(e, w), append(g, lexicon[w])
			}
			fmt.Fprintf(&en, "%s.\n", strings.Join(e, " "))
			fmt.Fprintf(&de, "%s.\n", strings.Join(g, " "))
		}
		for lang, s := range map[string]string{"en": en.String(), "de": de.String()} {
			var b bytes.Buffer
			z := gzip.NewWriter(&b)
			_, err := z.Write([]byte(s))
			require.NoError(t, err)
			require.NoError(t, z.Close())
			require.NoError(t, os.WriteFile(filepath.Join(root, "multi30k", split.name+"."+lang+".gz"), b.Bytes(), 0o644))
		}
	}
	return root
}

// toyChapter is the chapter with a tiny model and a BPE that learns a
// few merges, so words are split into subwords.
func toyChapter() *Chapter {
	c := Spec.New().(*Chapter)
	c.Model = Config{DModel: 32, Heads: 4, FF: 64, Layers: 1, MaxLen: 40, PreNorm: true}
	c.Merges, c.Warmup, c.Beam = 25, 30, 3
	return c
}

// On the toy task the chapter's own setup (BPE, token batches, loss,
// Noam's schedule, clipping) learns: the loss falls, and BLEU-4 of beam
// search over the cache rises from nothing to over 60. The model then
// goes through its checkpoint metadata (BPE included) and predicts the
// same translations as the trained one.
func TestChapterLearnsToyTranslation(t *testing.T) {
	root := writeToy(t, 600)
	c := toyChapter()
	var log bytes.Buffer
	o := chapter.Options{Epochs: 1, Batch: 256, LR: 3e-3, Seed: 1}
	s, err := c.Train(root, o, &log)
	require.NoError(t, err)
	require.Contains(t, log.String(), "BPE: 25 merges learned on 600 training pairs")
	require.Equal(t, 25, len(c.bpe.Merges()))
	before, err := s.Evaluate(nil)
	require.NoError(t, err)
	opt, lr, err := s.Optimizer()
	require.NoError(t, err)
	res, err := train.Run(train.Config[*data.Batch]{Params: s.Model.Params(), Optimizer: opt, LR: lr, Train: s.Train, Loss: s.Model.Loss,
		Epochs: 25})
	require.NoError(t, err)
	after, err := s.Evaluate(nil)
	require.NoError(t, err)
	first, last := res.Epochs[0], res.Epochs[len(res.Epochs)-1]
	t.Logf("BLEU %.2f before, %.2f after; train loss %.3f then %.3f; val loss %.3f then %.3f", before["bleu"], after["bleu"], first.TrainLoss, last.TrainLoss, before["val_loss"], after["val_loss"])
	require.Less(t, before["bleu"], 5.0)
	require.Greater(t, after["bleu"], 60.0)
	require.Less(t, after["val_loss"], 0.5*before["val_loss"])
	require.Less(t, last.TrainLoss, 0.5*first.TrainLoss)

	meta, err := c.Meta()
	require.NoError(t, err)
	again := Spec.New().(*Chapter)
	rm, err := again.Restore(meta)
	require.NoError(t, err)
	require.Equal(t, c.Recipe, again.Recipe)
	require.Equal(t, c.bpe.Tokens(), again.bpe.Tokens())
	for i, p := range rm.Params() {
		p.Value = s.Model.Params()[i].Value
	}
	in := "the red dog runs.\nsmall bird sings.\n"
	var want, got bytes.Buffer
	require.NoError(t, c.Predict(s.Model, chapter.Input{Stdin: strings.NewReader(in)}, &want))
	require.NoError(t, again.Predict(rm, chapter.Input{Stdin: strings.NewReader(in)}, &got))
	require.Equal(t, want.String(), got.String())
	t.Logf("predicted:\n%s", got.String())
}

// A checkpoint without the BPE, or with a BPE of another size, is refused
// with what is wrong.
func TestRestoreErrors(t *testing.T) {
	c := toyChapter()
	c.Model.Vocab = 9
	var err error
	c.bpe, err = text.NewBPE([]string{"a", "b</w>"}, []text.Merge{{Left: "a", Right: "b</w>"}})
	require.NoError(t, err)
	meta, err := c.Meta()
	require.NoError(t, err)
	_, err = Spec.New().Restore(meta)
	require.ErrorContains(t, err, "the checkpoint's BPE has 8 subwords for a model of 9")
	delete(meta, bpeKey)
	_, err = Spec.New().Restore(meta)
	require.ErrorContains(t, err, "no BPE")
	meta[chapter.KeyChapter] = "translate"
	_, err = Spec.New().Restore(meta)
	require.ErrorContains(t, err, "holds a translate model, not a transformer one")
	_, err = (&Chapter{}).Meta()
	require.Error(t, err)
}

// The BPE's special ids are the ones the model's data and decoding use.
func TestSpecialIDs(t *testing.T) {
	b, err := text.NewBPE(nil, nil)
	require.NoError(t, err)
	require.Equal(t, padID, b.ID(text.BPEPad))
	require.Equal(t, startID, b.ID(text.BPEStart))
	require.Equal(t, endID, b.ID(text.BPEEnd))
}

// Every pair is in exactly one batch, each epoch visits every batch once
// in its own seeded order, and a batch's padded size (rows × its longest
// side) stays within the budget unless it is one pair alone.
func TestTokenBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ids := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = 3 + rng.IntN(1000)
		}
		return s
	}
	var pairs []Pair
	targets := 0
	for i := range 500 {
		p := Pair{ids(1 + rng.IntN(30)), ids(1 + rng.IntN(30))}
		if i%50 == 0 {
			p.Src = ids(90) // over the budget of 64 alone
		}
		pairs, targets = append(pairs, p), targets+len(p.Trg)+1
	}
	ds, err := Dataset(pairs)
	require.NoError(t, err)
	key := func(src [][]int) string { return fmt.Sprint(src) }
	for _, budget := range []int{64, 1000} {
		b, err := NewTokenBatches(ds, budget, 1)
		require.NoError(t, err)
		require.Equal(t, targets, b.Len())
		groups := b.Groups()
		seen := make([]int, len(pairs))
		byRows := map[string]int{}
		for g, idx := range groups {
			longest := 0
			var src [][]int
			for _, i := range idx {
				seen[i]++
				longest = max(longest, len(pairs[i].Src)+1, len(pairs[i].Trg)+1)
				src = append(src, append(slices.Clone(pairs[i].Src), endID))
			}
			if len(idx) > 1 {
				require.LessOrEqual(t, len(idx)*longest, budget, "budget %d batch %d", budget, g)
			}
			byRows[key(src)] = g
		}
		require.Equal(t, slices.Repeat([]int{1}, len(pairs)), seen, "budget %d", budget)
		var orders [][]int
		for epoch := range 2 {
			var order []int
			for batch, err := range b.Batches(epoch) {
				require.NoError(t, err)
				src, err := rows(batch.Ragged("src"))
				require.NoError(t, err)
				g, ok := byRows[key(src)]
				require.True(t, ok, "a batch that is one of the groups, its pairs in order")
				order = append(order, g)
			}
			sorted := slices.Sorted(slices.Values(order))
			for i := range sorted {
				require.Equal(t, i, sorted[i], "every batch once")
			}
			orders = append(orders, order)
		}
		require.NotEqual(t, orders[0], orders[1], "each epoch its own order")
	}
	_, err = NewTokenBatches(ds, 0, 1)
	require.ErrorContains(t, err, "0 tokens a batch")
	_, err = NewTokenBatches(nil, 10, 1)
	require.Error(t, err)
}

// The loss of a padded batch is the token-weighted mean of each pair's
// loss alone: padding changes nothing, and only real positions count.
func TestLossIgnoresPadding(t *testing.T) {
	m, err := New(Config{Vocab: 12, DModel: 16, Heads: 4, FF: 32, Layers: 2, MaxLen: 16, PreNorm: true}, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	perturb(t, m, 0.5, 2)
	src := [][]int{{5, 6, 7, 2}, {8, 2}, {9, 10, 11, 5, 6, 2}}
	in := [][]int{{1, 7, 8}, {1, 9, 10, 11, 5}, {1}}
	out := [][]int{{7, 8, 2}, {9, 10, 11, 5, 2}, {2}}
	for _, eps := range []float64{0, 0.1} {
		tape := graph.NewEvalTape()
		loss, n := m.Loss(tape, src, in, out, eps)
		require.Equal(t, 9, n)
		all, err := loss.Tensor()
		require.NoError(t, err)
		var sum float64
		for i := range src {
			l, k := m.Loss(tape, src[i:i+1], in[i:i+1], out[i:i+1], eps)
			v, err := l.Tensor()
			require.NoError(t, err)
			sum += v.At(0) * float64(k)
		}
		require.InDelta(t, sum/9, all.At(0), 1e-5, "eps %g", eps)
	}
	tape := graph.NewEvalTape()
	for _, c := range []struct {
		src, in, out [][]int
		err          string
	}{
		{nil, nil, nil, "0 sources"},
		{src[:1], in[:1], out[1:2], "row 0 has 3 decoder inputs and 5 targets"},
		{src[:1], [][]int{{}}, [][]int{{}}, "want the same number, at least 1"},
		{src[:1], [][]int{{1, 40}}, [][]int{{40, 2}}, "outside the vocabulary"},
	} {
		l, _ := m.Loss(tape, c.src, c.in, c.out, 0.1)
		require.ErrorContains(t, l.Err(), c.err)
	}
}

// Teacher forcing is causal: changing a later decoder input leaves the
// logits of every earlier position as they were.
func TestDecodeIsCausal(t *testing.T) {
	m, err := New(Config{Vocab: 12, DModel: 16, Heads: 4, FF: 32, Layers: 2, MaxLen: 16, PreNorm: true}, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	perturb(t, m, 0.5, 3)
	tape := graph.NewEvalTape()
	memory, lengths := m.Encode(tape, [][]int{{5, 6, 7, 2}})
	a, err := m.Decode([][]int{{1, 7, 8, 9, 10}}, memory, lengths).Tensor()
	require.NoError(t, err)
	b, err := m.Decode([][]int{{1, 7, 8, 4, 3}}, memory, lengths).Tensor()
	require.NoError(t, err)
	v := 12
	for j := range 3 * v {
		require.Equal(t, a.At(j), b.At(j), "position %d", j/v)
	}
	require.NotEqual(t, a.At(3*v), b.At(3*v), "position 3 sees its own input")
}
