package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestONNXInspect(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"../../onnx/run/testdata/shapes.onnx", []string{
			"opset: 17\n", "input x: FLOAT [batch, 6, 4]\n", "output y: FLOAT [batch, 12]\n",
			"op Shape: 3\n", "op Slice: 2\n", "unsupported: none\n", "compile: ok, 16 of 30 nodes run at run time",
		}},
		{"../../onnx/testdata/convbn.onnx", []string{"opset: 13\n", "op Conv: 1\n", "unsupported: none\n", "compile: ok"}},
		{"../../onnx/run/testdata/cnn.onnx", []string{"runs on: plan at map[x:[1 3 11 11]]"}},
		{"../../onnx/run/testdata/lstm.onnx", []string{"runs on: interpreter at", "LSTM", "has no plan form"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.NoError(t, run([]string{"onnx", "inspect", tc.file}, &out, &errb))
			for _, w := range tc.want {
				assert.Contains(t, out.String(), w)
			}
		})
	}
}

func TestONNXInspectErrors(t *testing.T) {
	for _, args := range [][]string{
		{"onnx"},
		{"onnx", "frob"},
		{"onnx", "inspect"},
		{"onnx", "inspect", "a", "b"},
		{"onnx", "inspect", "no-such-file.onnx"},
		{"onnx", "explain"},
		{"onnx", "explain", "--batch", "0", "../../onnx/run/testdata/cnn.onnx"},
		{"onnx", "explain", "--dim", "batch", "../../onnx/run/testdata/cnn.onnx"},
	} {
		var out, errb bytes.Buffer
		assert.Error(t, run(args, &out, &errb), "%v", args)
	}
}

// explain prints the plan of the signature --batch and --dim give: the
// path, the ops after the passes (the fused conv2d+clip of cnn.onnx's
// depthwise conv and ReLU6), or why a model stays on the interpreter.
func TestONNXExplain(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--batch", "2", "../../onnx/run/testdata/cnn.onnx"}, []string{"inputs map[x:[2 3 11 11]]", "path: plan", "after the passes", "conv2d+clip"}},
		{[]string{"--dim", "N=3", "--batch", "5", "../../onnx/run/testdata/cnn.onnx"}, []string{"inputs map[x:[3 3 11 11]]", "path: plan"}},
		{[]string{"../../onnx/run/testdata/lstm.onnx"}, []string{"path: interpreter", "LSTM"}},
	} {
		var out, errb bytes.Buffer
		require.NoError(t, run(append([]string{"onnx", "explain"}, tc.args...), &out, &errb), "%v", tc.args)
		for _, w := range tc.want {
			assert.Contains(t, out.String(), w, "%v", tc.args)
		}
	}
}
