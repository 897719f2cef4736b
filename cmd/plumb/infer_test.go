package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// plumb infer --explain prints a model's plan before and after the passes;
// a wrong model, batch or a missing --explain are errors naming them.
func TestInferExplain(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"infer", "--explain", "--batch", "2", "mnist-cnn"}, &out, &errOut))
	for _, want := range []string{
		"inputs [float32[2 1 28 28]] -> outputs [float32[2 10]]",
		"before the passes: 9 ops",
		"after the passes: 6 ops",
		"conv2d+relu",
	} {
		require.Contains(t, out.String(), want)
	}
	out.Reset()
	require.NoError(t, run([]string{"infer", "--explain", "--no-fusion", "--seq-len", "3", "text-cnn"}, &out, &errOut))
	require.Contains(t, out.String(), "inputs [int64[3]]")
	require.NotContains(t, out.String(), "epilogues")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"infer", "mnist-cnn"}, "want --load CKPT (predictions) or --explain (the plan)"},
		{[]string{"infer", "--explain"}, "want one MODEL (mnist-cnn, mnist-mlp, resnet32, text-cnn, text-lstm, translate-encoder), got 0"},
		{[]string{"infer", "--explain", "vgg"}, `unknown model "vgg"`},
		{[]string{"infer", "--explain", "--batch", "0", "resnet32"}, "--batch 0 and --seq-len 20 must be positive"},
	} {
		require.ErrorContains(t, run(c.args, &out, &errOut), c.want)
	}
}
