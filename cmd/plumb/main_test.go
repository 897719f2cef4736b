package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Train a quick MLP, save it, and evaluate the checkpoint: the accuracy eval
// prints must be the one training printed.
func TestTrainSaveEval(t *testing.T) {
	ckpt := filepath.Join(t.TempDir(), "mlp.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "2000", "--batch", "32", "--save", ckpt}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "epoch 1/1: train loss")
	require.Contains(t, out.String(), "saved "+ckpt)
	require.Contains(t, errOut.String(), "samples/s", "progress goes to stderr")
	var acc string
	for _, line := range bytes.Split(out.Bytes(), []byte("\n")) {
		if i := bytes.Index(line, []byte("test accuracy ")); i >= 0 {
			acc = string(line[i : i+bytes.IndexByte(line[i:], '%')+1])
		}
	}
	require.NotEmpty(t, acc)

	out.Reset()
	require.NoError(t, run([]string{"eval", "mnist", "--model", "mlp", "--load", ckpt}, &out, &errOut))
	require.Contains(t, out.String(), acc)

	// The same checkpoint does not fit the CNN: the error names a tensor.
	require.ErrorContains(t, run([]string{"eval", "mnist", "--model", "cnn", "--load", ckpt}, &out, &errOut), "conv1/kernel")
}

func TestUsageErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train"}, ""},
		{[]string{"train", "cifar"}, "unknown model family"},
		{[]string{"fly", "mnist"}, "unknown command"},
		{[]string{"eval", "mnist"}, "--load FILE is required"},
		{[]string{"train", "mnist", "--model", "rnn"}, `unknown model "rnn"`},
		{[]string{"train", "mnist", "--device", "tpu"}, `--device "tpu": want cpu or cuda`},
		{[]string{"eval", "mnist", "--load", "/nonexistent/x.safetensors"}, "no such file"},
	} {
		err := run(c.args, &out, &errOut)
		require.Error(t, err, c.args)
		require.Contains(t, err.Error(), c.want, c.args)
	}
}

func TestParityReport(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"parity", "--dir", "../../parity/testdata"}, &out, &errOut))
	require.Contains(t, out.String(), "conv2d")
	require.Contains(t, out.String(), "optim_adam")
	require.NotContains(t, out.String(), "FAIL")
	require.ErrorContains(t, run([]string{"parity", "--dir", t.TempDir()}, &out, &errOut), "parity")
}
