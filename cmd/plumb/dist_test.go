package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/dist"
)

// plumb train mnist --dist in one process trains through the generic
// trainer, writes the loss trace and the state file, and a second run
// resumes from it after the finished epoch.
func TestTrainDistAloneAndResume(t *testing.T) {
	dir := t.TempDir()
	state, trace := filepath.Join(dir, "state.safetensors"), filepath.Join(dir, "loss.txt")
	args := []string{"train", "mnist", "--model", "mlp", "--limit", "640", "--batch", "64", "--dist",
		"--state", state, "--loss-trace", trace, "--eval-every", "5", "--eval-images", "200", "--target", "0.3"}
	var out, errOut bytes.Buffer
	require.NoError(t, run(args, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "data-parallel over 1 process(es)")
	assert.Contains(t, out.String(), "epoch 1/1: train loss")
	assert.Regexp(t, `test accuracy 0\.\d+ >= 0.3 after \d+ steps`, out.String())
	assert.Contains(t, out.String(), "peak memory (VmHWM) per rank, MiB:")
	b, err := os.ReadFile(trace)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 10)
	assert.Regexp(t, `^1 10 \d+\.\d+`, lines[9])
	require.FileExists(t, state)

	out.Reset()
	require.NoError(t, run(append(args[:len(args):len(args)], "--epochs", "2", "--resume", state), &out, &errOut), errOut.String())
	assert.NotContains(t, out.String(), "epoch 1/2")
	assert.Contains(t, out.String(), "epoch 2/2: train loss")
}

// --dtype float64 trains the model and images in double precision.
func TestTrainMNISTFloat64(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "256", "--batch", "64", "--dtype", "float64"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "epoch 1/1: train loss")
	err := run([]string{"train", "mnist", "--dtype", "float16"}, &out, &errOut)
	assert.ErrorContains(t, err, `--dtype "float16", want float32 or float64`)
}

func TestTrainDistErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"train", "mnist", "--dist", "--device", "cuda"}, &out, &errOut)
	assert.ErrorContains(t, err, "--dist trains on the CPU")
	if dist.MPI {
		return // the MPI build would join a group of 2 that does not exist
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2") // as under mpirun -np 2: --dist is on by itself
	err = run([]string{"train", "mnist", "--limit", "64"}, &out, &errOut)
	assert.ErrorContains(t, err, "launched as one of 2 processes, but this binary was built without MPI")
}

func TestScaleReport(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"scale", "--workers", "8,32", "--gbits", "10", "--latency", "25us", "--rate", "mnist-cnn=1000"}, &out, &errOut), errOut.String())
	s := out.String()
	assert.Contains(t, s, "1 process: an allreduce moves nothing")
	// 1000 examples/s at batch 64 is 64 ms a step.
	assert.Regexp(t, `mnist-cnn\s+33620\s+0\.13\s+64\.00\s+10 Gbit/s, 25µs\s+8\s`, s)
	assert.Regexp(t, `resnet32 \(CIFAR-10\)\s+464154\s+1\.86\s.*\s32\s`, s)
	for _, bad := range [][]string{{"--workers", "0"}, {"--gbits", "10,100", "--latency", "1us"}, {"--rate", "cnn"}} {
		assert.Error(t, run(append([]string{"scale"}, bad...), &out, &errOut), bad)
	}
}
