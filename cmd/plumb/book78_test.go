package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// The SRL and translation commands fail with clear errors before any
// training: missing flags, missing data, stray arguments.
func TestChapterCommandErrors(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PLUMB_DATA", "")
	var out, errOut bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "srl"}, "eval srl: --load FILE is required"},
		{[]string{"train", "srl"}, "srl: no data directory"},
		{[]string{"train", "srl", "--data", empty}, "conll05"},
		{[]string{"train", "srl", "extra"}, `train srl: unexpected argument "extra"`},
		{[]string{"train", "translate", "extra"}, `train translate: unexpected argument "extra"`},
		{[]string{"train", "srl", "--epochs", "0"}, "train srl: --epochs 0, want at least 1"},
		{[]string{"translate"}, "translate: --load FILE is required"},
		{[]string{"translate", "--load", empty + "/none"}, "sizes.json"},
		{[]string{"translate", "--load", "x", "--batch", "0"}, "--batch 0 must be positive"},
		{[]string{"train", "translate"}, "translate: no data directory"},
		{[]string{"train", "translate", "--data", empty}, "no Multi30k"},
		{[]string{"eval", "translate"}, "unknown command"},
		{[]string{"eval", "srl", "--load", "x", "--device", "tpu"}, `--device "tpu": want cpu or cuda`},
		{[]string{"translate", "--load", "x", "--device", "tpu"}, `--device "tpu": want cpu or cuda`},
	} {
		err := run(c.args, &out, &errOut)
		require.Error(t, err, c.args)
		require.Contains(t, err.Error(), c.want, c.args)
	}
}

// writeFile writes content to dir/rel, gzipped when rel ends in .gz.
func writeFile(t *testing.T, dir, rel, content string) {
	p := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	var b bytes.Buffer
	if strings.HasSuffix(rel, ".gz") {
		z := gzip.NewWriter(&b)
		_, err := z.Write([]byte(content))
		require.NoError(t, err)
		require.NoError(t, z.Close())
	} else {
		b.WriteString(content)
	}
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
}

// train srl saves a model that eval srl scores the same, on a tiny
// CoNLL-05 lookalike.
func TestTrainEvalSRL(t *testing.T) {
	dir := t.TempDir()
	rel := "conll05/conll05st-release/test.wsj/"
	writeFile(t, dir, rel+"words/test.wsj.words", strings.Repeat("The\ncat\nsaw\nfish\n.\n\n", 12))
	writeFile(t, dir, rel+"props/test.wsj.props", strings.Repeat("-\t(A0*\n-\t*)\nsee\t(V*)\n-\t(A1*)\n-\t*\n\n", 12))
	writeFile(t, dir, "conll05/paddle_dicts/verbDict.txt", "see\n")
	writeFile(t, dir, "conll05/paddle_dicts/targetDict.txt", "B-A0\nI-A0\nB-A1\nI-A1\nB-V\nI-V\nO\n")
	ckpt := filepath.Join(t.TempDir(), "srl.safetensors")
	logDir := t.TempDir()
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "srl", "--data", dir, "--batch", "4", "--save", ckpt, "--log", logDir}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "training db_lstm on 11 propositions, holding out 1")
	require.Contains(t, out.String(), "saved "+ckpt+" (best held-out F1 so far)")
	require.Contains(t, out.String(), "run log in "+logDir)
	log, err := os.ReadFile(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	require.Contains(t, string(log), `"model":"srl-batch4"`)
	require.Contains(t, string(log), `"f1":`)
	i := strings.Index(out.String(), "held-out cost ")
	require.GreaterOrEqual(t, i, 0, out.String())
	cost := out.String()[i+len("held-out cost ") : i+len("held-out cost ")+7]
	out.Reset()
	require.NoError(t, run([]string{"eval", "srl", "--data", dir, "--load", ckpt}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "on 1 held-out propositions: cost "+cost)

	// --load starts training from the saved parameters: the first
	// held-out cost of a continued run is not the fresh model's.
	out.Reset()
	require.NoError(t, run([]string{"train", "srl", "--data", dir, "--batch", "4", "--load", ckpt, "--limit", "4"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "training db_lstm on 4 propositions")
	require.NotContains(t, out.String(), "saved ")
}

// train translate saves a model (with its sizes and vocabularies) that
// plumb translate loads to translate stdin, one line out per line in.
func TestTrainTranslateAndTranslate(t *testing.T) {
	dir := t.TempDir()
	en := strings.Repeat("A man rides a bike.\nTwo dogs play.\n", 4)
	de := strings.Repeat("Ein Mann fährt Rad.\nZwei Hunde spielen.\n", 4)
	for _, split := range []string{"train", "val", "test_2016_flickr"} {
		writeFile(t, dir, "multi30k/"+split+".en.gz", en)
		writeFile(t, dir, "multi30k/"+split+".de.gz", de)
	}
	model := filepath.Join(t.TempDir(), "mt.safetensors")
	var out, errOut bytes.Buffer
	logDir := t.TempDir()
	require.NoError(t, run([]string{"train", "translate", "--data", dir, "--emb", "8", "--hidden", "8", "--batch", "4", "--beam", "2",
		"--save", model, "--log", logDir, "--log-every", "1"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "test2016 BLEU")
	require.Contains(t, out.String(), "saved "+model+" (best BLEU so far)")
	require.Contains(t, out.String(), "epoch 1 step 1: loss ")
	log, err := os.ReadFile(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	require.Contains(t, string(log), `"bleu":`)
	stdin = strings.NewReader("A man rides a bike.\nTwo dogs play.\nunknown words here\n")
	t.Cleanup(func() { stdin = os.Stdin })
	out.Reset()
	require.NoError(t, run([]string{"translate", "--load", model, "--beam", "2", "--batch", "2"}, &out, &errOut), errOut.String())
	require.Len(t, strings.Split(strings.TrimRight(out.String(), "\n"), "\n"), 3, out.String())
}
