package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// lastMetric returns the value of metric in the last epoch line of out.
func lastMetric(t *testing.T, out, metric string) float64 {
	ms := regexp.MustCompile(`(?m)^epoch \d+/\d+: .*`+metric+` (\d\.\d{4})`).FindAllStringSubmatch(out, -1)
	require.NotEmpty(t, ms, "no epoch line with %s in\n%s", metric, out)
	v, err := strconv.ParseFloat(ms[len(ms)-1][1], 64)
	require.NoError(t, err)
	return v
}

// BERT pretrained by masked LM learns the tiny reviews' words (masked
// tokens well above the 1-in-6 of guessing among their six words), and a
// classifier fine-tuned from that checkpoint starts from its encoder and
// separates the two classes.
func TestBERTPretrainThenFineTune(t *testing.T) {
	root := writeTinyIMDB(t)
	ckpt := filepath.Join(t.TempDir(), "mlm.safetensors")
	size := []string{"--layers", "1", "--hidden", "16", "--heads", "2", "--ffn", "32", "--vocab-size", "40", "--seq-len", "24", "--batch", "4", "--data", root}
	var out, errOut bytes.Buffer
	require.NoError(t, run(append([]string{"train", "bert-mlm", "--epochs", "15", "--lr", "3e-3", "--save", ckpt}, size...), &out, &errOut), errOut.String())
	require.Greater(t, lastMetric(t, out.String(), "masked accuracy"), 0.4)

	out.Reset()
	require.NoError(t, run([]string{"train", "bert-classify", "--pretrained", ckpt, "--epochs", "10", "--lr", "3e-3", "--batch", "4", "--data", root}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "from "+ckpt+" (")
	require.Equal(t, 1.0, lastMetric(t, out.String(), "accuracy"))

	err := run([]string{"train", "bert-classify", "--pretrained", filepath.Join(root, "none.safetensors"), "--epochs", "1", "--data", root}, &out, &errOut)
	require.ErrorContains(t, err, "bert-classify --pretrained")
}
