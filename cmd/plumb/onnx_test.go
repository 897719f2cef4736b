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
	} {
		var out, errb bytes.Buffer
		assert.Error(t, run(args, &out, &errb), "%v", args)
	}
}
