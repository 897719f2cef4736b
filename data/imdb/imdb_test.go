package imdb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/internal/datatest"
)

func tinyIMDB() map[string][]byte {
	return map[string][]byte{
		"aclImdb/train/pos/10_9.txt":  []byte("Great film!<br />Loved it."),
		"aclImdb/train/pos/2_7.txt":   []byte("good GOOD good"),
		"aclImdb/train/neg/0_1.txt":   []byte("Bad, bad film."),
		"aclImdb/test/neg/5_4.txt":    []byte("Not great.\n"),
		"aclImdb/test/pos/1_10.txt":   []byte("film"),
		"aclImdb/train/unsup/0_0.txt": []byte("unlabelled: skipped"),
		"aclImdb/train/urls_pos.txt":  []byte("http://skipped"),
		"aclImdb/imdb.vocab":          []byte("skipped\n"),
	}
}

func TestLoadIMDB(t *testing.T) {
	files := tinyIMDB()
	tree := datatest.WriteFiles(t, files)
	archive := datatest.WriteFiles(t, map[string][]byte{"aclImdb_v1.tar.gz": datatest.TarGz(t, files)})
	for name, src := range map[string]string{
		"extracted tree":          filepath.Join(tree, "aclImdb"),
		"folder holding the tree": tree,
		"archive":                 filepath.Join(archive, "aclImdb_v1.tar.gz"),
		"folder holding archive":  archive,
	} {
		t.Run(name, func(t *testing.T) {
			train, test, err := Load(src)
			require.NoError(t, err)
			// Positive first (label 0, as Paddle), each group by file name.
			assert.Equal(t, []Review{
				{ID: 10, Rating: 9, Label: Positive, Tokens: []string{"great", "filmbr", "loved", "it"}},
				{ID: 2, Rating: 7, Label: Positive, Tokens: []string{"good", "good", "good"}},
				{ID: 0, Rating: 1, Label: Negative, Tokens: []string{"bad", "bad", "film"}},
			}, train)
			assert.Equal(t, []Review{
				{ID: 1, Rating: 10, Label: Positive, Tokens: []string{"film"}},
				{ID: 5, Rating: 4, Label: Negative, Tokens: []string{"not", "great"}},
			}, test)
			v, err := Vocab(2, train, test)
			require.NoError(t, err)
			assert.Equal(t, []string{"good", "bad", "film", "great", data.Unk}, v.Words())
			ds, err := Dataset(train, v)
			require.NoError(t, err)
			assert.Equal(t, []int64{0, 0, 1}, ds.Tensor("label").Int64s())
			assert.Equal(t, []int64{3, 4, 4, 4, 0, 0, 0, 1, 1, 2}, ds.Ragged("words").Values.Int64s())
			assert.Equal(t, []int{0, 4, 7, 10}, ds.Ragged("words").Offsets)
		})
	}
}

func TestLoadIMDBErrors(t *testing.T) {
	files := tinyIMDB()
	files["aclImdb/train/pos/x_9.txt"] = []byte("bad name")
	_, _, err := Load(datatest.WriteFiles(t, files))
	assert.ErrorContains(t, err, `train/pos/x_9.txt: file name "x_9.txt": want <id>_<rating>.txt`)

	onlyTrain := map[string][]byte{"aclImdb/train/pos/1_8.txt": []byte("x")}
	_, _, err = Load(datatest.WriteFiles(t, onlyTrain))
	assert.ErrorContains(t, err, "no test/{pos,neg}")

	bad := datatest.WriteFiles(t, map[string][]byte{"aclImdb_v1.tar.gz": []byte("not gzip at all, not tar either")})
	_, _, err = Load(filepath.Join(bad, "aclImdb_v1.tar.gz"))
	assert.ErrorContains(t, err, "aclImdb_v1.tar.gz: tar")
	_, _, err = Load(filepath.Join(t.TempDir(), "missing.tar.gz"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// The real aclImdb archive: 12,500 reviews per split and label (README 2),
// with its rating histograms.
func TestRealIMDB(t *testing.T) {
	src := datatest.RealPath(t, "imdb/aclImdb_train_test.tar.gz")
	train, test, err := Load(src)
	require.NoError(t, err)
	for _, c := range []struct {
		name    string
		reviews []Review
		ratings map[int]int
	}{
		{"train", train, map[int]int{7: 2496, 8: 3009, 9: 2263, 10: 4732, 1: 5100, 2: 2284, 3: 2420, 4: 2696}},
		{"test", test, map[int]int{7: 2307, 8: 2850, 9: 2344, 10: 4999, 1: 5022, 2: 2302, 3: 2541, 4: 2635}},
	} {
		labels := map[int64]int{}
		ratings := map[int]int{}
		tokens := 0
		for _, r := range c.reviews {
			labels[r.Label]++
			ratings[r.Rating]++
			tokens += len(r.Tokens)
			require.Equal(t, r.Label == Positive, r.Rating >= 7, "review %d", r.ID)
		}
		assert.Equal(t, map[int64]int{Positive: 12500, Negative: 12500}, labels, c.name)
		assert.Equal(t, c.ratings, ratings, c.name)
		t.Logf("IMDB %s: %d reviews (%d pos, %d neg), %d tokens", c.name, len(c.reviews), labels[Positive], labels[Negative], tokens)
	}
	v, err := Vocab(151, train, test) // Paddle's word_dict cutoff 150
	require.NoError(t, err)
	t.Logf("Paddle imdb word_dict (cutoff 150): %d words", v.Len())
}

// FuzzLoadIMDB: any archive bytes give reviews or an error, never a panic.
func FuzzLoadIMDB(f *testing.F) {
	f.Add(datatest.TarGz(f, tinyIMDB()))
	f.Add(datatest.TarGz(f, map[string][]byte{"train/neg/3_2.txt": []byte("x"), "test/pos/0_7.txt": nil}))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "fuzz.tar.gz")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		train, test, err := Load(p)
		if err != nil {
			return
		}
		for _, r := range append(train, test...) {
			require.True(t, r.Label == Positive || r.Label == Negative)
			require.True(t, r.Rating >= 1 && r.Rating <= 10)
		}
	})
}
