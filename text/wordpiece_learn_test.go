package text

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// counts returns WordCounts holding each word n times.
func counts(words map[string]int) *WordCounts {
	c := NewWordCounts(WordPieceConfig{})
	for w, n := range words {
		for range n {
			c.Add(w)
		}
	}
	return c
}

// bruteMerges is the reference: the first n merges found by recounting
// the pieces and re-evaluating the log-likelihood Σ n_s·log(n_s/N) of
// the words after trying every adjacent pair, the best gain winning (ties
// to the more frequent pair, then the smaller in byte order).
func bruteMerges(words map[string]int, n int) []string {
	type word struct {
		pieces []string
		n      int
	}
	var ws []word
	for w, c := range words {
		var ps []string
		for i, r := range w {
			if i == 0 {
				ps = append(ps, string(r))
			} else {
				ps = append(ps, "##"+string(r))
			}
		}
		ws = append(ws, word{ps, c})
	}
	join := func(ps []string, a, b string) []string {
		var out []string
		for i := 0; i < len(ps); i++ {
			if i+1 < len(ps) && ps[i] == a && ps[i+1] == b {
				out = append(out, a+strings.TrimPrefix(b, "##"))
				i++
			} else {
				out = append(out, ps[i])
			}
		}
		return out
	}
	loglik := func(ws []word) float64 {
		count, total := map[string]int{}, 0
		for _, w := range ws {
			for _, p := range w.pieces {
				count[p] += w.n
				total += w.n
			}
		}
		ll := 0.0
		for _, c := range count {
			ll += float64(c) * math.Log(float64(c)/float64(total))
		}
		return ll
	}
	var merges []string
	for range n {
		pairs := map[[2]string]int{}
		for _, w := range ws {
			for i := 1; i < len(w.pieces); i++ {
				pairs[[2]string{w.pieces[i-1], w.pieces[i]}] += w.n
				if w.pieces[i-1] == w.pieces[i] && i+1 < len(w.pieces) && w.pieces[i+1] == w.pieces[i] {
					i++ // x·x·x: the merge joins the first two only
				}
			}
		}
		base := loglik(ws)
		var best [2]string
		bestGain, bestN, found := 0.0, 0, false
		for p, c := range pairs {
			var tried []word
			for _, w := range ws {
				tried = append(tried, word{join(w.pieces, p[0], p[1]), w.n})
			}
			g := loglik(tried) - base
			better := g > bestGain+1e-9 || (math.Abs(g-bestGain) <= 1e-9 && (c > bestN || (c == bestN && (p[0] < best[0] || (p[0] == best[0] && p[1] < best[1])))))
			if !found || better {
				best, bestGain, bestN, found = p, g, c, true
			}
		}
		if !found {
			break
		}
		for i := range ws {
			ws[i].pieces = join(ws[i].pieces, best[0], best[1])
		}
		merges = append(merges, best[0]+strings.TrimPrefix(best[1], "##"))
	}
	return merges
}

// The learner's merges are those of the brute-force reference, and its
// alphabet the words' characters by count (the corpus of the Hugging Face
// course's WordPiece chapter: h 15, p 17, b 4, ##u 36, ##g 20, ##n 16,
// ##s 5).
func TestLearnWordPieceMatchesBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		words map[string]int
	}{
		{"hug", map[string]int{"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}},
		{"repeats", map[string]int{"aaaa": 7, "aab": 3, "baaa": 2, "abab": 4, "b": 9}},
		{"words", map[string]int{"lower": 5, "lowest": 2, "newer": 6, "wider": 3, "new": 2, "low": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := counts(tc.words)
			alphabet := map[string]bool{}
			for w := range tc.words {
				for i, r := range w {
					alphabet[map[bool]string{true: "", false: "##"}[i == 0]+string(r)] = true
				}
			}
			n := 8
			vocab, err := LearnWordPiece(c, LearnOptions{Size: len(DefaultSpecial) + len(alphabet) + n, MinCount: 1})
			require.NoError(t, err)
			got := vocab[len(DefaultSpecial)+len(alphabet):]
			want := bruteMerges(tc.words, n)
			// a merge that remakes an existing piece adds nothing to the vocabulary
			var wantNew []string
			for _, m := range want {
				if !slices.Contains(wantNew, m) {
					wantNew = append(wantNew, m)
				}
			}
			require.Equal(t, wantNew[:len(got)], got)
		})
	}
	vocab, err := LearnWordPiece(counts(map[string]int{"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5}), LearnOptions{Size: 12, MinCount: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "##u", "##g", "p", "##n", "h", "##s", "b"}, vocab)
}

// A learned vocabulary covers its training words: the tokenizer splits
// each into pieces that join back to the word, none unknown, and the
// common words become single pieces.
func TestLearnWordPieceCoversItsWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	stems := []string{"play", "walk", "talk", "jump", "read", "watch", "love", "hate", "good", "bad", "movie", "film"}
	ends := []string{"", "s", "ed", "ing", "er", "ers"}
	c := NewWordCounts(WordPieceConfig{})
	var lines []string
	for range 400 {
		var b strings.Builder
		for range 8 {
			fmt.Fprintf(&b, "%s%s ", stems[rng.IntN(len(stems))], ends[rng.IntN(len(ends))])
		}
		lines = append(lines, b.String()+"The END!")
		c.Add(lines[len(lines)-1])
	}
	vocab, err := LearnWordPiece(c, LearnOptions{Size: 120})
	require.NoError(t, err)
	require.LessOrEqual(t, len(vocab), 120)
	seen := map[string]bool{}
	for _, v := range vocab {
		require.False(t, seen[v], "%q twice", v)
		seen[v] = true
	}
	wp, err := NewWordPiece(vocab, WordPieceConfig{})
	require.NoError(t, err)
	unk, _ := wp.ID("[UNK]")
	for _, line := range lines[:50] {
		ids := wp.IDs(line)
		require.NotContains(t, ids, unk, line)
		var words []string
		for _, tok := range wp.Tokenize(line) {
			if strings.HasPrefix(tok, "##") {
				words[len(words)-1] += tok[2:]
			} else {
				words = append(words, tok)
			}
		}
		require.Equal(t, strings.Fields(strings.ReplaceAll(strings.ToLower(line), "!", " !")), words)
	}
	for _, w := range []string{"film", "end", "watch", "jump", "playing"} {
		_, ok := wp.ID(w)
		require.True(t, ok, "%q is a piece", w)
	}
	again, err := LearnWordPiece(c, LearnOptions{Size: 120})
	require.NoError(t, err)
	require.Equal(t, vocab, again, "deterministic")
}

func TestLearnWordPieceErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *WordCounts
		opt  LearnOptions
		want string
	}{
		{"nil counts", nil, LearnOptions{Size: 10}, "no words counted"},
		{"no words", NewWordCounts(WordPieceConfig{}), LearnOptions{Size: 10}, "no words counted"},
		{"all rare", counts(map[string]int{"once": 1}), LearnOptions{Size: 100}, "seen 2 times or more"},
		{"bad min count", counts(map[string]int{"a": 3}), LearnOptions{Size: 100, MinCount: -1}, "MinCount -1"},
		{"size below alphabet", counts(map[string]int{"abcdef": 3}), LearnOptions{Size: 8}, "Size 8 is below the 5 special tokens and 6 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LearnWordPiece(tc.c, tc.opt)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Words merge until nothing is left to merge: the vocabulary stops short
// of Size rather than repeating a piece.
func TestLearnWordPieceStopsWhenWordsAreWhole(t *testing.T) {
	vocab, err := LearnWordPiece(counts(map[string]int{"abc": 2, "abd": 2}), LearnOptions{Size: 100})
	require.NoError(t, err)
	require.Len(t, vocab, 12) // 5 special, a ##b ##c ##d, then ab, abc, abd
	require.ElementsMatch(t, []string{"ab", "abc", "abd"}, vocab[9:])
}
