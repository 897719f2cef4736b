package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeFiles writes name -> content under root.
func writeFiles(t *testing.T, root string, files map[string]string) {
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// Train both sentiment nets on a tiny aclImdb tree: the commands run end
// to end and print the evaluation; bad flags are refused first.
func TestTrainSentiment(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for _, split := range []string{"train", "test"} {
		for i := range 6 {
			files[fmt.Sprintf("imdb/aclImdb/%s/pos/%d_9.txt", split, i)] = strings.Repeat("a great fine film! ", 30)
			files[fmt.Sprintf("imdb/aclImdb/%s/neg/%d_2.txt", split, i)] = strings.Repeat("a dull bad film. ", 30)
		}
	}
	writeFiles(t, root, files)
	for _, model := range []string{"cnn", "lstm"} {
		var out, errOut bytes.Buffer
		require.NoError(t, run([]string{"train", "sentiment", "--model", model, "--data", root, "--batch", "4", "--limit", "8"}, &out, &errOut), errOut.String())
		require.Contains(t, out.String(), "training sentiment "+model+" on 8 reviews")
		require.Contains(t, out.String(), "epoch 1/1: train loss")
		require.Contains(t, out.String(), "accuracy")
		require.Contains(t, out.String(), "words/s")
	}
	// --dist: the generic trainer's data-parallel path, here over one
	// process (the MPI build under mpirun spreads it over several).
	var out, errOut bytes.Buffer
	ckpt := filepath.Join(t.TempDir(), "lstm.safetensors")
	require.NoError(t, run([]string{"train", "sentiment", "--model", "lstm", "--data", root, "--batch", "4", "--limit", "8", "--dist", "--save", ckpt}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "data-parallel over 1 process(es)")
	require.Contains(t, out.String(), "epoch 1/1: train loss")
	require.Contains(t, out.String(), "peak memory (VmHWM) per rank")
	require.FileExists(t, ckpt)
	require.ErrorContains(t, run([]string{"train", "sentiment", "--model", "rnn", "--data", root}, &out, &errOut), `--model "rnn"`)
	require.ErrorContains(t, run([]string{"train", "sentiment", "--lr", "0", "--data", root}, &out, &errOut), "--lr 0")
}

// Train the recommender on tiny MovieLens 100K files.
func TestTrainRecommender(t *testing.T) {
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
	ckpt := filepath.Join(t.TempDir(), "rec.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "recommender", "--data", root, "--epochs", "2", "--batch", "16", "--save", ckpt}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "training recommender on 180 ratings, testing on 20 (8 users, 6 movies")
	require.Contains(t, out.String(), "epoch 2/2: train loss")
	require.Contains(t, out.String(), "rmse stars")
	// --load continues from the checkpoint.
	require.NoError(t, run([]string{"train", "recommender", "--data", root, "--epochs", "1", "--batch", "16", "--load", ckpt}, &out, &errOut), errOut.String())
	t.Setenv("PLUMB_DATA", "")
	require.ErrorContains(t, run([]string{"train", "recommender"}, &out, &errOut), "pass --data DIR")
}
