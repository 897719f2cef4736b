package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tiny datasets the chapter tests train on, each written under a
// fresh dataset root in the chapter's folder, as ../shared/data lays
// them out.

// writeTinyIMDB writes 6 positive and 6 negative reviews a split.
func writeTinyIMDB(t *testing.T) string {
	root := t.TempDir()
	files := map[string]string{}
	for _, split := range []string{"train", "test"} {
		for i := range 6 {
			files[fmt.Sprintf("imdb/aclImdb/%s/pos/%d_9.txt", split, i)] = strings.Repeat("a great fine film! ", 30)
			files[fmt.Sprintf("imdb/aclImdb/%s/neg/%d_2.txt", split, i)] = strings.Repeat("a dull bad film. ", 30)
		}
	}
	writeFiles(t, root, files)
	return root
}

// writeTinyMovieLens writes MovieLens 100K files: 8 users, 6 movies, 200 ratings.
func writeTinyMovieLens(t *testing.T) string {
	root := t.TempDir()
	var users, items, ratings strings.Builder
	for u := 1; u <= 8; u++ {
		fmt.Fprintf(&users, "%d|%d|%s|%s|00000\n", u, 20+u, [2]string{"M", "F"}[u%2], [2]string{"artist", "doctor"}[u%2])
	}
	for m := 1; m <= 6; m++ {
		fmt.Fprintf(&items, "%d|Film %d (1995)|01-Jan-1995||http://x|0|%d|%d\n", m, m, m%2, 1-m%2)
	}
	for i := range 200 {
		u, m := 1+i%8, 1+(i*7)%6
		fmt.Fprintf(&ratings, "%d\t%d\t%d\t%d\n", u, m, 1+(u+m)%5, 880000000+i)
	}
	writeFiles(t, root, map[string]string{
		"movielens/ml-100k/u.user": users.String(), "movielens/ml-100k/u.item": items.String(),
		"movielens/ml-100k/u.data": ratings.String(), "movielens/ml-100k/u.genre": "unknown|0\nAction|1\nComedy|2\n",
		"movielens/ml-100k/u.occupation": "artist\ndoctor\n",
	})
	return root
}

// writeTinyCoNLL writes 12 copies of one CoNLL-05 proposition and Paddle's
// verb and tag dictionaries.
func writeTinyCoNLL(t *testing.T) string {
	dir := t.TempDir()
	rel := "conll05/conll05st-release/test.wsj/"
	writeFile(t, dir, rel+"words/test.wsj.words", strings.Repeat("The\ncat\nsaw\nfish\n.\n\n", 12))
	writeFile(t, dir, rel+"props/test.wsj.props", strings.Repeat("-\t(A0*\n-\t*)\nsee\t(V*)\n-\t(A1*)\n-\t*\n\n", 12))
	writeFile(t, dir, "conll05/paddle_dicts/verbDict.txt", "see\n")
	writeFile(t, dir, "conll05/paddle_dicts/targetDict.txt", "B-A0\nI-A0\nB-A1\nI-A1\nB-V\nI-V\nO\n")
	return dir
}

// writeTinyMulti30k writes two sentence pairs, four times, for every split.
func writeTinyMulti30k(t *testing.T) string {
	dir := t.TempDir()
	en := strings.Repeat("A man rides a bike.\nTwo dogs play.\n", 4)
	de := strings.Repeat("Ein Mann fährt Rad.\nZwei Hunde spielen.\n", 4)
	for _, split := range []string{"train", "val", "test_2016_flickr"} {
		writeFile(t, dir, "multi30k/"+split+".en.gz", en)
		writeFile(t, dir, "multi30k/"+split+".de.gz", de)
	}
	return dir
}

// writeTinyCIFAR writes 24 training and 10 test images as binary batches.
func writeTinyCIFAR(t *testing.T) string {
	rng := rand.New(rand.NewPCG(1, 2))
	root := t.TempDir()
	dir := filepath.Join(root, "cifar10", "lossless-subset")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	writeCIFARBin(t, filepath.Join(dir, "data_batch_1.bin"), 24, rng)
	writeCIFARBin(t, filepath.Join(dir, "test_batch.bin"), 10, rng)
	return root
}
