package main

import (
	"bytes"
	"os"
	"path/filepath"
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
	root := writeTinyIMDB(t)
	for _, model := range []string{"cnn", "lstm"} {
		var out, errOut bytes.Buffer
		require.NoError(t, run([]string{"train", "sentiment", "--model", model, "--data", root, "--batch", "4", "--limit", "8"}, &out, &errOut), errOut.String())
		require.Contains(t, out.String(), "training sentiment "+model+" on 8 reviews")
		require.Contains(t, out.String(), "epoch 1/1: train loss")
		require.Contains(t, out.String(), "accuracy")
		require.Contains(t, out.String(), "reviews/s")
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
	root := writeTinyMovieLens(t)
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
