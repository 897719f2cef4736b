//go:build !cuda

package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// A binary built without the cuda tag says how to get one that trains on
// the GPU, before it loads any data.
func TestDeviceCUDAWithoutTheTag(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"train", "mnist", "--device", "cuda"}, &out, &errOut)
	require.ErrorContains(t, err, "built without CUDA")
	require.ErrorContains(t, err, "go build -tags cuda ./cmd/plumb")
	require.Empty(t, out.String())
	err = run([]string{"eval", "mnist", "--load", "x.safetensors", "--device", "cuda"}, &out, &errOut)
	require.ErrorContains(t, err, "built without CUDA")
	for _, model := range []string{"word2vec", "recommender", "sentiment", "srl", "translate", "transformer"} {
		err = run([]string{"train", model, "--device", "cuda", "--data", t.TempDir()}, &out, &errOut)
		require.ErrorContains(t, err, "train "+model+": --device cuda: this plumb was built without CUDA", model)
	}
	require.Empty(t, out.String())
}
