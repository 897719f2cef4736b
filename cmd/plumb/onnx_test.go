package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	onnxrun "github.com/plumbml/plumb/onnx/run"
	"github.com/plumbml/plumb/tensor"
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

// plumb onnx export writes a file that onnx/run loads and runs at another
// batch size, for a built-in model and for a trained checkpoint; the
// checkpoint's export gives the restored model's own outputs.
func TestONNXExport(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	for _, tc := range []struct {
		model string
		in    map[string]*tensor.Tensor
		want  tensor.Shape
	}{
		{"mnist-cnn", map[string]*tensor.Tensor{"images": tensor.Zeros(tensor.Float32, 3, 1, 28, 28)}, tensor.Shape{3, 10}},
		{"text-cnn", map[string]*tensor.Tensor{"words": tensor.Zeros(tensor.Int64, 3, 7), "words_lengths": tensor.MustFromSlice([]int64{7, 1, 4}, 3)}, tensor.Shape{3, 2}},
	} {
		file := filepath.Join(dir, tc.model+".onnx")
		require.NoError(t, run([]string{"onnx", "export", "-o", file, "--seq-len", "5", tc.model}, &out, &errb), errb.String())
		assert.Contains(t, out.String(), "wrote "+file+": "+tc.model+" (fresh weights), ONNX opset 17")
		m, err := onnxrun.Load(file)
		require.NoError(t, err)
		y, err := m.Run(tc.in)
		require.NoError(t, err)
		assert.Equal(t, tc.want, y["logits"].Shape())
	}

	ckpt := filepath.Join(dir, "mnist.safetensors")
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "64", "--epochs", "1", "--batch", "32", "--save", ckpt}, &out, &errb), errb.String())
	file := filepath.Join(dir, "trained.onnx")
	require.NoError(t, run([]string{"onnx", "export", "--load", ckpt, "-o", file}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "the mnist model of "+ckpt)
	ex, err := checkpointExportable(ckpt, 1)
	require.NoError(t, err)
	x, err := tensor.RandUniform(tensor.NewRNG(1), tensor.Float32, 0, 1, 5, 1, 28, 28)
	require.NoError(t, err)
	want, err := ex.forward(graph.NewEvalTape(), []*tensor.Tensor{x}).Tensor()
	require.NoError(t, err)
	m, err := onnxrun.Load(file)
	require.NoError(t, err)
	y, err := m.Run(map[string]*tensor.Tensor{"images": x})
	require.NoError(t, err)
	require.Equal(t, want.Shape(), y["logits"].Shape())
	for i := range want.Size() {
		assert.InDelta(t, want.At(i), y["logits"].At(i), 1e-5)
	}
}

func TestONNXExportErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mnist-mlp"}, "-o FILE is required"},
		{[]string{"-o", "x.onnx"}, "want --load CKPT or one MODEL (mnist-cnn, mnist-mlp, resnet32"},
		{[]string{"-o", "x.onnx", "vgg"}, `unknown model "vgg"`},
		{[]string{"-o", "x.onnx", "--load", "a.safetensors", "mnist-mlp"}, `--load and MODEL "mnist-mlp" both given`},
		{[]string{"-o", "x.onnx", "--seq-len", "0", "text-cnn"}, "--seq-len 0 must be positive"},
		{[]string{"-o", "x.onnx", "--load", "no-such.safetensors"}, "no-such.safetensors"},
	} {
		var out, errb bytes.Buffer
		err := run(append([]string{"onnx", "export"}, tc.args...), &out, &errb)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// feedsOf returns an exportable's example as the exported file's inputs:
// a ragged input (inferWords' sentences, all of one length) padded to
// [batch, length] with its lengths.
func feedsOf(t *testing.T, ex exportable) map[string]*tensor.Tensor {
	feeds := map[string]*tensor.Tensor{}
	for i, in := range ex.opts.Inputs {
		x := ex.example[i]
		if in.Offsets == nil {
			feeds[in.Name] = x
			continue
		}
		b := len(in.Offsets) - 1
		p, err := x.Reshape(b, x.Dim(0)/b)
		require.NoError(t, err)
		l := tensor.Zeros(tensor.Int64, b)
		l.Fill(float64(x.Dim(0) / b))
		feeds[in.Name], feeds[in.Name+"_lengths"] = p, l
	}
	return feeds
}

// A word2vec and a recommender checkpoint, trained on tiny data, export;
// onnx/run gives the restored model's outputs within 1e-5.
func TestONNXExportCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		chapter string
		data    func(*testing.T) string
		output  string
	}{
		{"word2vec", writeTinyPTB, "logits"},
		{"recommender", writeTinyMovieLens, "score"},
	} {
		t.Run(tc.chapter, func(t *testing.T) {
			dir := t.TempDir()
			ckpt, file := filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "m.onnx")
			var out, errb bytes.Buffer
			require.NoError(t, run([]string{"train", tc.chapter, "--data", tc.data(t), "--epochs", "1", "--save", ckpt}, &out, &errb), errb.String())
			require.NoError(t, run([]string{"onnx", "export", "--load", ckpt, "-o", file, "--seq-len", "3"}, &out, &errb), errb.String())
			ex, err := checkpointExportable(ckpt, 3)
			require.NoError(t, err)
			want, err := ex.forward(graph.NewEvalTape(), ex.example).Tensor()
			require.NoError(t, err)
			m, err := onnxrun.Load(file)
			require.NoError(t, err)
			y, err := m.Run(feedsOf(t, ex))
			require.NoError(t, err)
			got := y[tc.output]
			require.Equal(t, want.Shape(), got.Shape())
			for i := range want.Size() {
				assert.InDelta(t, want.At(i), got.At(i), 1e-5)
			}
		})
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
