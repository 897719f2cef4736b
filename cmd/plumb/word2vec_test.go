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

// writeTinyPTB writes PTB-format files (one sentence a line) with every
// word repeated often enough to enter the dictionary.
func writeTinyPTB(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "ptb")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	words := strings.Fields("the cat sat on a mat and dog ran to park")
	for _, split := range []string{"train", "valid", "test"} {
		var b strings.Builder
		for s := range 120 {
			b.WriteString(" ")
			for k := range 9 {
				fmt.Fprintf(&b, "%s ", words[(s+k*3)%len(words)])
			}
			b.WriteString("\n")
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "ptb."+split+".txt"), []byte(b.String()), 0o644))
	}
	return filepath.Dir(dir)
}

// Train word2vec on tiny PTB files, save, and query the neighbours.
func TestTrainWord2VecAndSimilar(t *testing.T) {
	root := writeTinyPTB(t)
	ckpt := filepath.Join(t.TempDir(), "w2v.safetensors")
	logDir := filepath.Join(t.TempDir(), "log")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "word2vec", "--data", root, "--epochs", "2", "--save", ckpt, "--log", logDir}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "epoch 2/2: train loss")
	require.Contains(t, out.String(), "test cost")
	require.Contains(t, out.String(), "saved "+ckpt)
	require.FileExists(t, filepath.Join(logDir, "log.jsonl"))

	out.Reset()
	require.NoError(t, run([]string{"word2vec", "similar", "cat", "--load", ckpt, "--data", root, "--k", "3"}, &out, &errOut))
	require.Contains(t, out.String(), `words nearest to "cat"`)
	require.Equal(t, 1+3, strings.Count(out.String(), "\n"))

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"word2vec", "similar", "zebra", "--load", ckpt, "--data", root}, `"zebra" is not in the dictionary`},
		{[]string{"word2vec", "similar", "cat", "--data", root}, "--load FILE"},
		{[]string{"word2vec", "similar", "--load", ckpt}, "no WORD"},
		{[]string{"word2vec", "nearest"}, "want plumb word2vec similar"},
		{[]string{"train", "word2vec", "--data", root, "--batch", "0"}, "--batch 0"},
		{[]string{"train", "word2vec", "--data", filepath.Join(root, "missing")}, "ptb"},
	} {
		require.ErrorContains(t, run(tc.args, &out, &errOut), tc.want, "%v", tc.args)
	}
}
