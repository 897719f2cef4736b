package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// plumb quantize on a briefly trained MNIST CNN: the float32 and int8
// accuracies on the 10,000 test images, the per-layer report, a skip
// list, the saved int8 model evaluating to the same accuracy, the run
// log plumb kpi reads, and the flag errors.
func TestQuantizeCommand(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "cnn.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--limit", "640", "--save", ckpt}, &out, &errOut), errOut.String())

	out.Reset()
	int8File, logDir := filepath.Join(dir, "cnn-int8.safetensors"), filepath.Join(dir, "qrun")
	require.NoError(t, run([]string{"quantize", "--load", ckpt, "--calib", "2", "--method", "kl", "--report", "-o", int8File,
		"--log", logDir, "--run-name", "mnist-cnn-limit640-int8"}, &out, &errOut), errOut.String())
	s := out.String()
	require.Contains(t, s, "calibrated on 2 batches of 64 training images (kl); int8 layers: conv1, conv2, fc")
	m := regexp.MustCompile(`float32: accuracy ([0-9.]+)% on 10000 test images\nint8:    accuracy ([0-9.]+)% \(`).FindStringSubmatch(s)
	require.NotNil(t, m, s)
	for _, layer := range []string{"conv1", "conv2", "fc"} {
		require.Regexp(t, `\n  `+layer+` +(conv2d|linear) +0\.9[0-9]+ `, s, "a report row per int8 layer")
	}
	run1, err := runlog.Read(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	require.Equal(t, "mnist-cnn-limit640-int8", run1.Meta.Model)
	acc := runlog.Summarize(run1).Values["accuracy"]
	require.InDelta(t, acc*100, mustFloat(t, m[2]), 0.006, "the logged int8 accuracy is the printed one")

	out.Reset()
	require.NoError(t, run([]string{"quantize", "--load-int8", int8File}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "accuracy "+m[2]+"% on 10000 test images; int8 layers: conv1, conv2, fc", "the saved model gives the same accuracy")

	out.Reset()
	require.NoError(t, run([]string{"quantize", "--load", ckpt, "--calib", "1", "--skip", "conv1", "--test-limit", "500"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "int8 layers: conv2, fc")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"quantize"}, "want one of --load"},
		{[]string{"quantize", "--load", ckpt, "--load-int8", int8File}, "want one of --load"},
		{[]string{"quantize", "--load", ckpt, "--method", "median"}, `method "median"`},
		{[]string{"quantize", "--load", ckpt, "--skip", "conv9"}, `--skip "conv9" is no layer of the model (it has conv1, conv2, fc)`},
		{[]string{"quantize", "--load", ckpt, "--calib", "0"}, "--calib 0"},
		{[]string{"quantize", "--load-int8", ckpt}, "not an int8 model"},
	} {
		err := run(c.args, &out, &errOut)
		require.ErrorContains(t, err, c.want, "%v", c.args)
	}
	_, err = os.Stat(int8File)
	require.NoError(t, err)
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	_, err := fmt.Sscan(s, &v)
	require.NoError(t, err)
	return v
}
