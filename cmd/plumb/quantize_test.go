package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// plumb quantize on a small ResNet trained on generated CIFAR-10 binary
// batches: every convolution and the classifier go int8, both plans are
// evaluated on the test images, the report has a row per int8 layer, and
// the saved int8 model reloads to the same accuracy; the run log's
// default name is the chapter's and the model's.
func TestQuantizeCIFAR(t *testing.T) {
	root := writeTinyCIFAR(t)
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "resnet.safetensors")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "cifar10", "--data", root, "--depth", "8", "--width", "4", "--batch", "8", "--limit", "20", "--save", ckpt}, &out, &errOut), errOut.String())

	out.Reset()
	int8File, logDir := filepath.Join(dir, "int8.safetensors"), filepath.Join(dir, "qrun")
	require.NoError(t, run([]string{"quantize", "--load", ckpt, "--data", root, "--calib", "1", "--report", "-o", int8File, "--log", logDir}, &out, &errOut), errOut.String())
	s := out.String()
	layers := []string{"stem/conv", "stage1/block1/a/conv", "stage1/block1/b/conv", "stage2/block1/a/conv", "stage2/block1/b/conv", "stage2/block1/shortcut/conv",
		"stage3/block1/a/conv", "stage3/block1/b/conv", "stage3/block1/shortcut/conv", "fc"}
	require.Contains(t, s, "calibrated on 1 batches of 64 training images (minmax); int8 layers: "+strings.Join(layers, ", ")+"\n")
	for _, l := range layers {
		require.Regexp(t, `\n  `+regexp.QuoteMeta(l)+` +(conv2d|linear) +[0-9.]+ `, s, "a report row per int8 layer")
	}
	m := regexp.MustCompile(`float32: accuracy ([0-9.]+)% on 10 test images\nint8:    accuracy ([0-9.]+)% \(`).FindStringSubmatch(s)
	require.NotNil(t, m, s)
	run1, err := runlog.Read(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	require.Equal(t, "cifar10-resnet32-int8", run1.Meta.Model)

	out.Reset()
	require.NoError(t, run([]string{"quantize", "--load-int8", int8File, "--data", root}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "accuracy "+m[2]+"% on 10 test images", "the saved model gives the same accuracy")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"quantize", "--load", ckpt}, "cifar10: no data: pass --data DIR"},
		{[]string{"quantize", "--load", ckpt, "--data", root, "--format", "png"}, `--format "png": want bin or jpeg`},
		{[]string{"quantize", "--load", ckpt, "--data", root, "--skip", "conv9"}, `--skip "conv9" is no layer of the model (it has stem/conv, stage1/block1/a/conv`},
	} {
		t.Setenv("PLUMB_DATA", "")
		require.ErrorContains(t, run(c.args, &out, &errOut), c.want, "%v", c.args)
	}
}

// quantize names the chapters it takes when a checkpoint holds another
// chapter's model or names none.
func TestQuantChapterOf(t *testing.T) {
	for _, c := range []struct {
		meta map[string]string
		want string
	}{
		{map[string]string{"plumb/chapter": "mnist"}, ""},
		{map[string]string{"plumb/chapter": "cifar10"}, ""},
		{map[string]string{"plumb/chapter": "sentiment"}, "holds a sentiment model: plumb quantize takes mnist and cifar10 checkpoints"},
		{map[string]string{}, "names no chapter in its metadata (plumb quantize takes mnist and cifar10 checkpoints)"},
	} {
		qc, err := quantChapterOf(c.meta, "F")
		if c.want == "" {
			require.NoError(t, err)
			require.Equal(t, c.meta["plumb/chapter"], qc.spec.Name)
			continue
		}
		require.ErrorContains(t, err, c.want)
	}
}
