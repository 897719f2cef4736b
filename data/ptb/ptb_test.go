package ptb

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
)

const tinyPTB = " the cat sat \n the dog <unk> \n\n a cat \n"

func TestReadPTBAndNGrams(t *testing.T) {
	for _, in := range [][]byte{[]byte(tinyPTB), datatest.Gzip(t, []byte(tinyPTB))} {
		sents, err := Read(bytes.NewReader(in), "tiny")
		require.NoError(t, err)
		assert.Equal(t, [][]string{{"the", "cat", "sat"}, {"the", "dog", "<unk>"}, {}, {"a", "cat"}}, sents)
	}
	sents, err := Read(bytes.NewReader([]byte(tinyPTB)), "tiny")
	require.NoError(t, err)
	v, err := Vocab(1, sents)
	require.NoError(t, err)
	// Counts: <s> 4, <e> 4, the 2, cat 2, sat 1, dog 1, a 1; the corpus's <unk> is dropped and appended last.
	assert.Equal(t, []string{"<e>", "<s>", "cat", "the", "a", "dog", "sat", data.Unk}, v.Words())
	v2, err := Vocab(2, sents)
	require.NoError(t, err)
	assert.Equal(t, []string{"<e>", "<s>", "cat", "the", data.Unk}, v2.Words())

	// Paddle's NGRAM mode: <s> w... <e>, every window of n; the empty line (<s> <e>) is shorter than 3.
	ds, err := NGramDataset(sents, v2, 3)
	require.NoError(t, err)
	id := func(w string) int64 { return int64(v2.ID(w)) }
	s, e, cat, the, unk := id("<s>"), id("<e>"), id("cat"), id("the"), id(data.Unk)
	assert.Equal(t, []int64{
		s, the, the, cat, cat, unk, // <s> the cat sat <e>
		s, the, the, unk, unk, unk, // <s> the dog <unk> <e>
		s, unk, unk, cat, // <s> a cat <e>
	}, ds.Tensor("context").Int64s())
	assert.Equal(t, []int64{cat, unk, e, unk, unk, e, cat, e}, ds.Tensor("next").Int64s())
	assert.Equal(t, []int{8, 2}, []int(ds.Tensor("context").Shape()))

	lm, err := LMDataset(sents, v2, 3)
	require.NoError(t, err)
	assert.Equal(t, 2, lm.Len(), "src longer than 3 skipped: only the empty line and 'a cat' remain")
	assert.Equal(t, []int64{s, s, unk, cat}, lm.Ragged("src").Values.Int64s())
	assert.Equal(t, []int64{e, unk, cat, e}, lm.Ragged("trg").Values.Int64s())

	_, err = NGramDataset(sents, v2, 1)
	assert.ErrorContains(t, err, "n=1")
	noMarks, err := data.NewVocab([]string{data.Unk}, data.Unk)
	require.NoError(t, err)
	_, err = NGramDataset(sents, noMarks, 3)
	assert.ErrorContains(t, err, `lacks "<s>"`)
}

func TestLoadPTB(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{
		"ptb/ptb.train.txt.gz": datatest.Gzip(t, []byte(tinyPTB)),
		"ptb/ptb.valid.txt":    []byte(" a\n"),
		"ptb/ptb.test.txt":     []byte(" b c\n"),
	})
	train, valid, test, err := Load(dir)
	require.NoError(t, err)
	assert.Len(t, train, 4)
	assert.Equal(t, [][]string{{"a"}}, valid)
	assert.Equal(t, [][]string{{"b", "c"}}, test)
	_, _, _, err = Load(t.TempDir())
	assert.ErrorContains(t, err, "ptb.train.txt")
}

func TestReadPTBLimits(t *testing.T) {
	long := bytes.Repeat([]byte("a"), data.DefaultLimits().MaxLineBytes+1)
	_, err := Read(bytes.NewReader(long), "long.txt")
	assert.ErrorContains(t, err, "long.txt: line 1 longer than")
	_, err = Read(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}), "bad.gz")
	assert.ErrorContains(t, err, "bad.gz: gzip")
}

// The real PTB: the counts of the data folder's README (lines, tokens).
func TestRealPTB(t *testing.T) {
	dir := datatest.RealPath(t, "ptb")
	train, valid, test, err := Load(dir)
	require.NoError(t, err)
	for _, c := range []struct {
		name          string
		sents         [][]string
		lines, tokens int
	}{{"train", train, 42068, 887521}, {"valid", valid, 3370, 70390}, {"test", test, 3761, 78669}} {
		tokens := 0
		for _, s := range c.sents {
			tokens += len(s)
		}
		assert.Equal(t, c.lines, len(c.sents), c.name)
		assert.Equal(t, c.tokens, tokens, c.name)
		t.Logf("%s: %d sentences, %d tokens", c.name, len(c.sents), tokens)
	}
	v, err := Vocab(51, train, valid) // Paddle's default min_word_freq=50
	require.NoError(t, err)
	ds, err := NGramDataset(train, v, 5)
	require.NoError(t, err)
	t.Logf("imikolov dictionary (min_word_freq 50): %d words; train 5-grams: %d", v.Len(), ds.Len())
	// Every sentence of n words gives n+2-4 windows of 5 (<s> and <e> added; none when n+2 < 5).
	want := 0
	for _, s := range train {
		want += max(0, len(s)+2-4)
	}
	assert.Equal(t, want, ds.Len())
}

// FuzzReadPTB: any input gives sentences or an error, never a panic, and
// no sentence holds an empty or space-holding word.
func FuzzReadPTB(f *testing.F) {
	f.Add([]byte(tinyPTB))
	f.Fuzz(func(t *testing.T, b []byte) {
		sents, err := Read(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		for _, s := range sents {
			for _, w := range s {
				require.NotEmpty(t, w)
				require.NotContains(t, w, " ")
			}
		}
	})
}
