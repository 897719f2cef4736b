package text

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// sennrich is the toy corpus of Sennrich et al. 2016's section 3.2.
var sennrich = map[string]int{"low": 5, "lower": 2, "newest": 6, "widest": 3}

// The merges of the paper's toy corpus, worked by hand with the end mark
// on the last character and ties to the pair that sorts first: (e s) and
// (s t</w>) both count 9, (e s) sorts first; after (l o) three pairs count
// 6 and (e w) sorts first; and so on.
func TestLearnBPEByHand(t *testing.T) {
	b, err := LearnBPE(sennrich, BPEConfig{Merges: 100})
	require.NoError(t, err)
	want := []Merge{
		{"e", "s"}, {"es", "t</w>"}, {"l", "o"}, {"e", "w"}, {"ew", "est</w>"}, {"n", "ewest</w>"},
		{"lo", "w</w>"}, {"d", "est</w>"}, {"i", "dest</w>"}, {"w", "idest</w>"},
		{"e", "r</w>"}, {"lo", "w"}, {"low", "er</w>"},
	}
	require.Equal(t, want, b.Merges())
	require.Equal(t, []string{"d", "e", "i", "l", "n", "o", "r</w>", "s", "t</w>", "w", "w</w>"}, b.Alphabet())
	require.Equal(t, 5+11+13, b.Len())
	for _, w := range []string{"low", "lower", "newest", "widest"} {
		require.Equal(t, []string{w + EndOfWord}, b.Segment(w), w)
	}

	// The first 10 merges only; lowest is not a training word.
	b, err = LearnBPE(sennrich, BPEConfig{Merges: 10})
	require.NoError(t, err)
	require.Equal(t, want[:10], b.Merges())
	for _, c := range []struct {
		word string
		want []string
	}{
		{"lowest", []string{"lo", "w", "est</w>"}},
		{"lower", []string{"lo", "w", "e", "r</w>"}},
		{"newer", []string{"n", "ew", "e", "r</w>"}},
		{"wide", []string{"w", "i", "d", "e</w>"}},
		{"e", []string{"e</w>"}},
		{"s", []string{"s</w>"}},
		{"est", []string{"est</w>"}},
		{"eses", []string{"es", "e", "s</w>"}}, // s</w> is not s
	} {
		got := b.Segment(c.word)
		require.Equal(t, c.want, got, c.word)
		got[0] = "changed" // the cache hands out copies
		require.Equal(t, c.want, b.Segment(c.word), c.word)
	}
}

// MinCount stops learning at the first pair seen fewer times.
func TestLearnBPEMinCount(t *testing.T) {
	b, err := LearnBPE(sennrich, BPEConfig{Merges: 100, MinCount: 4})
	require.NoError(t, err)
	require.Len(t, b.Merges(), 7) // (lo w</w>) counts 5, (d est</w>) 3
	b, err = LearnBPE(map[string]int{"ab": 1, "cd": 1}, BPEConfig{Merges: 100})
	require.NoError(t, err)
	require.Empty(t, b.Merges())
	require.Equal(t, []string{"a", "b</w>"}, b.Segment("ab"))
}

// Every word of a random corpus, and random words of its alphabet the
// learner never saw, come back from Encode then Decode; so does the
// segmentation through NewBPE of the learned alphabet and merges.
func TestBPERoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	letters := []rune("abcdeäöüßéxyz")
	word := func() string {
		n := 1 + rng.IntN(9)
		r := make([]rune, n)
		for i := range r {
			r[i] = letters[rng.IntN(6+rng.IntN(len(letters)-5))] // skewed, so pairs repeat
		}
		return string(r)
	}
	counts := map[string]int{}
	for range 3000 {
		counts[word()]++
	}
	b, err := LearnBPE(counts, BPEConfig{Merges: 300})
	require.NoError(t, err)
	require.Len(t, b.Merges(), 300)
	again, err := NewBPE(b.Alphabet(), b.Merges())
	require.NoError(t, err)
	require.Equal(t, b.Tokens(), again.Tokens())
	for range 200 {
		words := make([]string, 1+rng.IntN(12))
		for i := range words {
			words[i] = word()
		}
		ids := b.Encode(words)
		for _, id := range ids {
			require.Greater(t, id, 4, "no special or unknown token for a known alphabet")
		}
		got, err := b.Decode(ids)
		require.NoError(t, err)
		require.Equal(t, words, got)
		require.Equal(t, ids, again.Encode(words))
		require.Equal(t, words, Detokenize(b.Tokenize(words)))
	}
}

// Characters outside the training alphabet are <unk> inside a word and
// <unk></w> at its end, so the words still come back (with <unk> for the
// character); padding and sentence marks are dropped by Decode.
func TestBPEUnknownCharacters(t *testing.T) {
	b, err := LearnBPE(sennrich, BPEConfig{Merges: 10})
	require.NoError(t, err)
	require.Equal(t, []string{"l", "ö", "w</w>"}, b.Segment("löw"))
	ids := b.Encode([]string{"löw", "lö", "low", "ö"})
	unk, unkEnd := b.ID(BPEUnknown), b.ID(BPEUnknownEnd)
	require.Equal(t, []int{b.ID("l"), unk, b.ID("w</w>"), b.ID("l"), unkEnd, b.ID("low</w>"), unkEnd}, ids)
	require.Equal(t, 3, unk)
	require.Equal(t, 4, unkEnd)
	withMarks := append(append([]int{b.ID(BPEStart)}, ids...), b.ID(BPEEnd), b.ID(BPEPad))
	got, err := b.Decode(withMarks)
	require.NoError(t, err)
	require.Equal(t, []string{"l<unk>w", "l<unk>", "low", "<unk>"}, got)
	_, err = b.Decode([]int{b.Len()})
	require.ErrorContains(t, err, "outside the vocabulary")
	_, err = b.Decode([]int{-1})
	require.Error(t, err)
	// Invalid UTF-8 is a symbol per byte, unknown.
	require.Equal(t, []int{unk, unkEnd}, b.Encode([]string{"\xff\xfe"}))
	// A cut-short translation's trailing subwords make a last word.
	require.Equal(t, []string{"low", "lo"}, Detokenize([]string{"low</w>", "lo"}))
	require.Empty(t, Detokenize(nil))
}

func TestBPEErrors(t *testing.T) {
	for _, c := range []struct {
		words map[string]int
		cfg   BPEConfig
		err   string
	}{
		{nil, BPEConfig{Merges: 1}, "no words"},
		{sennrich, BPEConfig{Merges: -1}, "merges -1"},
		{sennrich, BPEConfig{MinCount: -1}, "min count -1"},
		{map[string]int{"a": -2}, BPEConfig{}, `"a" counted -2 times`},
		{map[string]int{"a\xff": 1}, BPEConfig{}, "not valid UTF-8"},
		{map[string]int{"a</w>": 1}, BPEConfig{}, "holds the end-of-word mark"},
	} {
		_, err := LearnBPE(c.words, c.cfg)
		require.ErrorContains(t, err, c.err)
	}
	for _, c := range []struct {
		alphabet []string
		merges   []Merge
		err      string
	}{
		{[]string{"ab"}, nil, `"ab" is not one character`},
		{[]string{"a", "a"}, nil, `"a" twice`},
		{[]string{"a", "b"}, []Merge{{"a", "c"}}, "right symbol"},
		{[]string{"a", "b</w>"}, []Merge{{"b</w>", "a"}}, "left symbol"},
		{[]string{"a", "b"}, []Merge{{"a", "b"}, {"a", "b"}}, "repeats"},
		{[]string{"a"}, []Merge{{"a", "<pad>"}}, "right symbol"},
	} {
		_, err := NewBPE(c.alphabet, c.merges)
		require.ErrorContains(t, err, c.err)
	}
	var b *BPE
	require.Nil(t, b.Segment("a"))
	require.Zero(t, b.Len())
	require.Nil(t, b.Encode([]string{"a"}))
}
