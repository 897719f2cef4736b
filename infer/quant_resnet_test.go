package infer_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/tensor"
)

// quantizedResNet32 traces the book's ResNet-32 (seed 1, batch norm in
// inference form, folded into the convolutions by the passes) at batch,
// calibrates it (min-max) on calib random batches and quantizes it.
func quantizedResNet32(t testing.TB, batch, calib int) (*infer.Graph, *infer.Quantized) {
	net, err := cifar.New("resnet32", tensor.NewRNG(1))
	require.NoError(t, err)
	g, c := traceCalibrated(t, net, calib, batch, 3, 32, 32)
	q, err := infer.Quantize(g, c, infer.QuantOptions{Names: paramNames(net)})
	require.NoError(t, err)
	return g, q
}

// ResNet-32's plan runs every convolution and the classifier in int8:
// 31 padded 3×3 convolutions (stride 1 and 2, the zero point as padding)
// and 2 strided 1×1 projections. The identity blocks' residual adds (13)
// run in int8 inside the segments, the block's input kept in uint8 for
// its add, so each run of identity blocks is one segment (7 in all); the
// two projection blocks' adds run in the shortcut product's float32
// epilogue. The global average pool (uint8 in, requantized out) and the
// classifier end the last segment; only the input normalisation stays
// float32. On random inputs it was not calibrated on it gives the
// float plan's logits with a cosine similarity of at least 0.99 and a
// largest error at most 5% of the largest logit.
func TestQuantizedResNet32MatchesFloat(t *testing.T) {
	const batch = 8
	g, q := quantizedResNet32(t, batch, 3)
	require.Len(t, q.Layers(), 34, "33 convolutions and fc, all int8")
	var explain strings.Builder
	qp, err := q.Graph.Compile(infer.Options{})
	require.NoError(t, err)
	require.NoError(t, qp.Explain(&explain))
	after := explain.String()[strings.Index(explain.String(), "after the passes"):]
	require.Equal(t, 7, strings.Count(after, "int8[conv2d"), after)
	require.Equal(t, 13, strings.Count(after, ",add+relu"), "the identity blocks' int8 adds")
	require.Equal(t, 2, strings.Count(after, "conv2d+add+relu]"), "the projections' adds, in the float32 epilogue")
	require.Contains(t, after, ",add+relu,global_avg_pool2d,linear]", "the pool and the classifier end the last segment")
	require.Equal(t, 7, strings.Count(after, "int8["), after)
	require.NotContains(t, after, "  conv2d", "no float32 convolution is left")
	fp, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	for _, seed := range []uint64{99, 100} {
		x := randInput(t, seed, batch, 3, 32, 32)
		want, got := tensor.Empty(tensor.Float32, batch, 10), tensor.Empty(tensor.Float32, batch, 10)
		require.NoError(t, fp.Run(want, x))
		require.NoError(t, qp.Run(got, x))
		cos, rel := cosineAndMax(got.Float32s(), want.Float32s())
		t.Logf("seed %d: cosine %.6f, largest error %.4f of the largest logit", seed, cos, rel)
		require.Greater(t, cos, 0.99)
		require.Less(t, rel, 0.05)
		require.NotEqual(t, want.Float32s(), got.Float32s(), "the int8 plan must not be the float one")
	}
}

// BenchmarkResNet32Int8 times the book's ResNet-32 at batch 64 as the
// float32 plan and as the int8 plan (min-max calibration on 2 random
// batches), one call per iteration, with the process's CPU time a call;
// run with -cpu 1 for the one-thread bar.
func BenchmarkResNet32Int8(b *testing.B) {
	const batch = 64
	g, q := quantizedResNet32(b, batch, 2)
	fp, err := g.Compile(infer.Options{})
	require.NoError(b, err)
	qp, err := q.Graph.Compile(infer.Options{})
	require.NoError(b, err)
	x := randInput(b, 99, batch, 3, 32, 32)
	benchPlans(b, batch, tensor.Empty(tensor.Float32, batch, 10), x, []namedPlan{{"float32", fp}, {"int8", qp}})
}

// A saved int8 ResNet-32 with an input normalisation and a layer kept
// float32 (--skip) reloads onto a trace of a net with other weights and
// the default normalisation and gives the saved plan's logits exactly:
// the file holds the float32 constants the int8 graph still reads.
func TestQuantizedResNet32SaveLoad(t *testing.T) {
	const batch = 2
	net, err := cifar.New("resnet32", tensor.NewRNG(1))
	require.NoError(t, err)
	require.NoError(t, net.SetNorm(cifar.Norm{Mean: []float64{0.4, 0.5, 0.6}, Std: []float64{0.2, 0.25, 0.3}}))
	g, c := traceCalibrated(t, net, 2, batch, 3, 32, 32)
	q, err := infer.Quantize(g, c, infer.QuantOptions{Names: paramNames(net), Skip: []string{"stage2/block3/a/conv"}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "r32-int8.safetensors")
	require.NoError(t, q.Save(path, map[string]string{"model": "resnet32"}))

	other, err := cifar.New("resnet32", tensor.NewRNG(2))
	require.NoError(t, err)
	g2, err := infer.TraceLayer(other, randInput(t, 3, batch, 3, 32, 32))
	require.NoError(t, err)
	q2, err := infer.LoadQuantized(g2, path, infer.QuantOptions{Names: paramNames(other)})
	require.NoError(t, err)
	require.Len(t, q2.Layers(), 33, "every layer but the skipped one")
	x := randInput(t, 99, batch, 3, 32, 32)
	var outs [][]float32
	for _, qq := range []*infer.Quantized{q, q2} {
		p, err := qq.Graph.Compile(infer.Options{})
		require.NoError(t, err)
		y := tensor.Empty(tensor.Float32, batch, 10)
		require.NoError(t, p.Run(y, x))
		outs = append(outs, y.Float32s())
	}
	require.Equal(t, outs[0], outs[1])
}
