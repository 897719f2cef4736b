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

// Train word2vec on tiny PTB files, save, and predict the neighbours.
func TestTrainWord2VecAndPredict(t *testing.T) {
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
	stdin = strings.NewReader("cat\nzebra\n")
	t.Cleanup(func() { stdin = os.Stdin })
	require.NoError(t, run([]string{"predict", "word2vec", "--load", ckpt, "--k", "3"}, &out, &errOut))
	require.Regexp(t, `^cat\t\S+ -?\d\.\d{4} \S+ -?\d\.\d{4} \S+ -?\d\.\d{4}\nzebra\t\(not in the dictionary of \d+ words\)\n$`, out.String())

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "word2vec"}, "--load FILE"},
		{[]string{"predict", "word2vec", "--load", ckpt, filepath.Join(root, "missing.txt")}, "no such file"},
		{[]string{"train", "word2vec", "--data", root, "--batch", "0"}, "--batch 0"},
		{[]string{"train", "word2vec", "--data", filepath.Join(root, "missing")}, "ptb"},
	} {
		require.ErrorContains(t, run(tc.args, &out, &errOut), tc.want, "%v", tc.args)
	}
}
