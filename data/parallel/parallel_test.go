package parallel

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/imdb"
	"github.com/plumbml/plumb/data/internal/datatest"
)

func TestReadParallel(t *testing.T) {
	en := "A man rides.\nTwo dogs play\n"
	de := "Ein Mann reitet.\nZwei Hunde spielen\n"
	dir := datatest.WriteFiles(t, map[string][]byte{"train.en.gz": datatest.Gzip(t, []byte(en)), "train.de": []byte(de)})
	pairs, err := Load(filepath.Join(dir, "train.en.gz"), filepath.Join(dir, "train.de"), nil)
	require.NoError(t, err)
	assert.Equal(t, []Pair{
		{Src: []string{"A", "man", "rides."}, Trg: []string{"Ein", "Mann", "reitet."}},
		{Src: []string{"Two", "dogs", "play"}, Trg: []string{"Zwei", "Hunde", "spielen"}},
	}, pairs)
	lower, err := Read(strings.NewReader(en), strings.NewReader(de), "en", "de", imdb.Tokenize)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "man", "rides"}, lower[0].Src)

	_, err = Read(strings.NewReader(en+"extra\n"), strings.NewReader(de), "a.en", "a.de", nil)
	assert.ErrorContains(t, err, "a.en has 3 lines but a.de has 2")

	src, err := Vocab(lower, false, 0, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{data.BOS, data.EOS, data.Unk, "a", "dogs", "man", "play", "rides", "two"}, src.Words())
	trg, err := Vocab(lower, true, 2, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{data.BOS, data.EOS, data.Unk, "ein", "hunde"}, trg.Words())
	ds, err := Dataset(lower, src, trg, 0)
	require.NoError(t, err)
	seq := func(field string, i int) []int64 {
		s, err := ds.Ragged(field).Seq(i)
		require.NoError(t, err)
		return s.Int64s()
	}
	assert.Equal(t, []int64{0, 3, 5, 7, 1}, seq("src", 0), "<s> a man rides <e>")
	assert.Equal(t, []int64{0, 3, 2, 2}, seq("trg", 0), "<s> ein <unk> <unk>")
	assert.Equal(t, []int64{3, 2, 2, 1}, seq("trg_next", 0), "ein <unk> <unk> <e>")
	short, err := Dataset(append(lower, Pair{Src: []string{"a"}, Trg: []string{"ein"}}), src, trg, 4)
	require.NoError(t, err)
	assert.Equal(t, 1, short.Len(), "pairs longer than 4 ids skipped")
}

// The real Multi30k task 1 files: pair counts of the README (6.).
func TestRealMulti30k(t *testing.T) {
	dir := datatest.RealPath(t, "multi30k")
	for split, want := range map[string]int{"train": 29000, "val": 1014, "test_2016_flickr": 1000, "test_2017_flickr": 1000, "test_2017_mscoco": 461, "test_2018_flickr": 1071} {
		pairs, err := Load(filepath.Join(dir, split+".en.gz"), filepath.Join(dir, split+".de.gz"), imdb.Tokenize)
		require.NoError(t, err)
		assert.Equal(t, want, len(pairs), split)
		t.Logf("Multi30k %s: %d pairs", split, len(pairs))
	}
}

// FuzzReadParallel: any two inputs give aligned pairs or an error.
func FuzzReadParallel(f *testing.F) {
	f.Add([]byte("a b\nc\n"), []byte("x\ny z\n"))
	f.Fuzz(func(t *testing.T, src, trg []byte) {
		pairs, err := Read(bytes.NewReader(src), bytes.NewReader(trg), "s", "t", nil)
		if err != nil {
			return
		}
		for _, p := range pairs {
			for _, w := range append(p.Src, p.Trg...) {
				require.NotEmpty(t, w)
			}
		}
	})
}
