package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"regexp"
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
		{[]string{"eval", "srl"}, "eval srl: --load FILE"},
		{[]string{"train", "srl"}, "srl: no data: pass --data DIR"},
		{[]string{"train", "srl", "--data", empty}, "conll05"},
		{[]string{"train", "srl", "extra"}, `train srl: unexpected argument "extra"`},
		{[]string{"train", "translate", "extra"}, `train translate: unexpected argument "extra"`},
		{[]string{"train", "srl", "--epochs", "0"}, "train srl: --epochs 0, want at least 1"},
		{[]string{"translate"}, "predict translate: --load FILE"},
		{[]string{"translate", "--load", empty + "/none"}, "no such file"},
		{[]string{"translate", "--load", "x", "--batch", "0"}, "--batch 0"},
		{[]string{"train", "translate"}, "translate: no data: pass --data DIR"},
		{[]string{"train", "translate", "--data", empty}, "no Multi30k"},
		{[]string{"eval", "translate"}, "eval translate: --load FILE"},
		{[]string{"eval", "srl", "--load", "x", "--device", "tpu"}, `--device "tpu": want cpu or cuda`},
		{[]string{"translate", "--load", "x", "--device", "tpu"}, `--device "tpu": want cpu or cuda`},
		{[]string{"eval", "sentiment", "--load", empty + "/none"}, "no such file"},
		{[]string{"predict", "recommender", "--load", empty + "/none"}, "no such file"},
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
	dir := writeTinyCoNLL(t)
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
	cost := regexp.MustCompile(`, loss (\d+\.\d{4})`).FindStringSubmatch(out.String())
	require.Len(t, cost, 2, out.String())
	out.Reset()
	require.NoError(t, run([]string{"eval", "srl", "--data", dir, "--load", ckpt}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "on 1 held-out propositions: f1 ")
	require.Contains(t, out.String(), "loss "+cost[1])

	// --load starts training from the saved parameters: the first
	// held-out cost of a continued run is not the fresh model's.
	out.Reset()
	require.NoError(t, run([]string{"train", "srl", "--data", dir, "--batch", "4", "--load", ckpt, "--limit", "4"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "training db_lstm on 4 propositions")
	require.NotContains(t, out.String(), "saved ")
}

// train translate saves a model (its sizes and vocabularies in the
// checkpoint's metadata) that plumb translate loads to translate stdin,
// one line out per line in.
func TestTrainTranslateAndTranslate(t *testing.T) {
	dir := writeTinyMulti30k(t)
	model := filepath.Join(t.TempDir(), "mt.safetensors")
	var out, errOut bytes.Buffer
	logDir := t.TempDir()
	require.NoError(t, run([]string{"train", "translate", "--data", dir, "--emb", "8", "--hidden", "8", "--batch", "4", "--beam", "2",
		"--save", model, "--log", logDir, "--log-every", "1"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "bleu ")
	require.Contains(t, out.String(), "target words/s")
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
