package infer_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// paramNames maps each parameter tensor of net to its name.
func paramNames(net interface{ Params() []*graph.Param }) map[*tensor.Tensor]string {
	m := map[*tensor.Tensor]string{}
	for _, p := range net.Params() {
		m[p.Value] = p.Name
	}
	return m
}

// cosineAndMax returns the cosine similarity of a and b and their
// largest absolute difference relative to b's largest magnitude.
func cosineAndMax(a, b []float32) (cos, rel float64) {
	var ab, aa, bb, md, mb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab, aa, bb = ab+x*y, aa+x*x, bb+y*y
		md, mb = max(md, math.Abs(x-y)), max(mb, math.Abs(y))
	}
	return ab / math.Sqrt(aa*bb), md / mb
}

// The int8 MNIST CNN and MLP, calibrated on random batches by each
// method, give the float plan's logits within the stated tolerance on
// random inputs they were not calibrated on: cosine similarity at least
// 0.999 and a largest error at most 5% of the largest logit (KL, which
// clips the ReLU outputs' tails by design, and on 36 random images of an
// untrained net clips them hard: 0.99 and 15%). One segment
// replaces the whole chain, the MLP's flatten left as a float view.
func TestQuantizedMatchesFloat(t *testing.T) {
	for _, name := range []string{"cnn", "mlp"} {
		for _, method := range []infer.CalibMethod{infer.CalibMinMax, infer.CalibPercentile, infer.CalibKL} {
			t.Run(name+"/"+string(method), func(t *testing.T) {
				const batch = 9
				net := mnistNet(t, name)
				g, err := infer.TraceLayer(net, randInput(t, 3, batch, 1, 28, 28))
				require.NoError(t, err)
				var batches [][]*tensor.Tensor
				for s := range 4 {
					batches = append(batches, []*tensor.Tensor{randInput(t, uint64(10+s), batch, 1, 28, 28)})
				}
				calib, err := infer.Calibrate(g, batches, infer.CalibOptions{Method: method})
				require.NoError(t, err)
				q, err := infer.Quantize(g, calib, infer.QuantOptions{Names: paramNames(net)})
				require.NoError(t, err)
				require.Equal(t, 1, q.Graph.Len()-map[string]int{"cnn": 0, "mlp": 1}[name], "one int8 segment")
				fp, err := g.Compile(infer.Options{})
				require.NoError(t, err)
				qp, err := q.Graph.Compile(infer.Options{})
				require.NoError(t, err)
				x := randInput(t, 99, batch, 1, 28, 28)
				want, got := tensor.Empty(tensor.Float32, batch, 10), tensor.Empty(tensor.Float32, batch, 10)
				require.NoError(t, fp.Run(want, x))
				require.NoError(t, qp.Run(got, x))
				cos, rel := cosineAndMax(got.Float32s(), want.Float32s())
				minCos, maxRel := 0.999, 0.05
				if method == infer.CalibKL {
					minCos, maxRel = 0.99, 0.15
				}
				require.Greater(t, cos, minCos)
				require.Less(t, rel, maxRel)
				require.NotEqual(t, want.Float32s(), got.Float32s(), "the int8 plan must not be the float one")
				var explain strings.Builder
				require.NoError(t, qp.Explain(&explain))
				seg := map[string]string{"cnn": "int8[conv2d+relu,max_pool2d,conv2d+relu,max_pool2d,flatten,linear]", "mlp": "int8[linear+relu,linear+relu,linear]"}[name]
				require.Contains(t, explain.String(), seg)
				require.Empty(t, qp.Fallbacks(), "the segment runs into the arena (ForwardInto)")
			})
		}
	}
}

// A saved int8 model, loaded onto a fresh trace of the same
// architecture with other weights, gives the quantized plan's outputs
// bit for bit; a layer skipped at quantization stays float32 in the
// loaded model too.
func TestQuantizedSaveLoad(t *testing.T) {
	const batch = 5
	for _, skip := range [][]string{nil, {"conv1"}} {
		net := mnistNet(t, "cnn")
		g, err := infer.TraceLayer(net, randInput(t, 3, batch, 1, 28, 28))
		require.NoError(t, err)
		calib, err := infer.Calibrate(g, [][]*tensor.Tensor{{randInput(t, 10, batch, 1, 28, 28)}}, infer.CalibOptions{})
		require.NoError(t, err)
		q, err := infer.Quantize(g, calib, infer.QuantOptions{Names: paramNames(net), Skip: skip})
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "q.safetensors")
		require.NoError(t, q.Save(path, map[string]string{"chapter": "mnist"}))
		meta, err := infer.QuantizedMeta(path)
		require.NoError(t, err)
		require.Equal(t, "mnist", meta["chapter"])

		other, err := mnist.New("cnn", tensor.NewRNG(77)) // other weights: the file's must be used
		require.NoError(t, err)
		g2, err := infer.TraceLayer(other, randInput(t, 3, batch, 1, 28, 28))
		require.NoError(t, err)
		q2, err := infer.LoadQuantized(g2, path, infer.QuantOptions{Names: paramNames(other)})
		require.NoError(t, err)
		require.Equal(t, len(q.Layers()), len(q2.Layers()))
		p1, err := q.Graph.Compile(infer.Options{})
		require.NoError(t, err)
		p2, err := q2.Graph.Compile(infer.Options{})
		require.NoError(t, err)
		x := randInput(t, 5, batch, 1, 28, 28)
		y1, y2 := tensor.Empty(tensor.Float32, batch, 10), tensor.Empty(tensor.Float32, batch, 10)
		if skip != nil { // the float conv1 reads the model's weights: load them into other
			for i, p := range other.Params() {
				require.NoError(t, p.Value.CopyFrom(net.Params()[i].Value))
			}
		}
		require.NoError(t, p1.Run(y1, x))
		require.NoError(t, p2.Run(y2, x))
		require.Equal(t, y1.Float32s(), y2.Float32s())

		_, err = infer.LoadQuantized(g2, path, infer.QuantOptions{}) // unnamed weights: conv2d_0/weight, ...
		require.ErrorContains(t, err, "none of the graph's")
	}
}

// One int8 plan serves goroutines at once: each gets the serial run's
// logits bit for bit (the segments' scratch is per call).
func TestQuantizedConcurrentRuns(t *testing.T) {
	const batch, workers = 4, 4
	_, _, p := quantizedMNIST(t, batch, 1)
	want := make([][]float32, workers)
	xs := make([]*tensor.Tensor, workers)
	for w := range workers {
		xs[w] = randInput(t, uint64(20+w), batch, 1, 28, 28)
		out := tensor.Empty(tensor.Float32, batch, 10)
		require.NoError(t, p.Run(out, xs[w]))
		want[w] = out.Float32s()
	}
	errs := make(chan error, workers)
	got := make([][]float32, workers)
	for w := range workers {
		go func() {
			x := xs[w]
			out := tensor.Empty(tensor.Float32, batch, 10)
			var err error
			for range 3 {
				if err = p.Run(out, x); err != nil {
					break
				}
			}
			got[w] = out.Float32s()
			errs <- err
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
	require.Equal(t, want, got)
}

// residualBlock builds relu(conv(h) + h) with h = relu(conv1(x)) (a
// padded 3×3 convolution after an unpadded one, as a ResNet block's
// second half) and, for a linear layer, relu(x·W + b + x): the residual
// (h, or the quantized input x) stays uint8 and the add runs in int8.
func residualBlock(t *testing.T, conv bool) (*infer.Graph, *tensor.Tensor) {
	b := infer.NewBuilder()
	rng := tensor.NewRNG(8)
	param := func(shape ...int) infer.Ref {
		w, err := tensor.RandNormal(rng, tensor.Float32, 0, 0.2, shape...)
		require.NoError(t, err)
		return b.Const(w)
	}
	if !conv {
		x := b.Input(tensor.Float32, 6, 24)
		y := b.Op(ops.LinearOp(), x, param(24, 24), param(24))
		y = b.Op(ops.UnaryOp("relu"), b.Op(ops.BinaryOp("add"), x, y))
		g, err := b.Graph(y)
		require.NoError(t, err)
		return g, randInput(t, 41, 6, 24)
	}
	x := b.Input(tensor.Float32, 3, 4, 9, 7)
	h := b.Op(ops.UnaryOp("relu"), b.Op(ops.Conv2DOp(ops.Conv2DAttrs{}), x, param(8, 4, 1, 1), param(8)))
	y := b.Op(ops.Conv2DOp(ops.Conv2DAttrs{Pad: [4]int{1, 1, 1, 1}}), h, param(8, 8, 3, 3), param(8))
	y = b.Op(ops.UnaryOp("relu"), b.Op(ops.BinaryOp("add"), y, h))
	g, err := b.Graph(y)
	require.NoError(t, err)
	return g, randInput(t, 41, 3, 4, 9, 7)
}

// The residual add runs in int8 inside the segment (one op) and the plan gives the float
// plan's output within the stated tolerance: cosine similarity at least
// 0.999, largest error at most 3% of the largest output.
func TestQuantizedResidual(t *testing.T) {
	for _, conv := range []bool{true, false} {
		g, x := residualBlock(t, conv)
		calib, err := infer.Calibrate(g, [][]*tensor.Tensor{{x}}, infer.CalibOptions{})
		require.NoError(t, err)
		q, err := infer.Quantize(g, calib, infer.QuantOptions{})
		require.NoError(t, err)
		// the residual (conv1+relu, or the input) is kept in uint8 for an
		// int8 add: one segment either way.
		require.Equal(t, 1, q.Graph.Len())
		fp, err := g.Compile(infer.Options{})
		require.NoError(t, err)
		qp, err := q.Graph.Compile(infer.Options{})
		require.NoError(t, err)
		want, err := fp.Forward(x)
		require.NoError(t, err)
		got, err := qp.Forward(x)
		require.NoError(t, err)
		cos, rel := cosineAndMax(got[0].Float32s(), want[0].Float32s())
		require.Greater(t, cos, 0.999, "conv %v", conv)
		require.Less(t, rel, 0.03, "conv %v", conv)
		rep, err := q.Report(x)
		require.NoError(t, err)
		if conv { // conv1+relu, conv2, then the int8 add+relu
			require.Len(t, rep, 3)
		} else { // the linear layer, then the int8 add+relu
			require.Len(t, rep, 2)
		}
		require.Equal(t, "add", rep[len(rep)-1].Op)
		require.InDelta(t, cos, rep[len(rep)-1].Cosine, 1e-9, "the report's last stage is the plan's output")
	}
}

// quantizedMNIST traces the MNIST CNN at batch, calibrates it (min-max)
// on calib random batches, quantizes it and compiles the int8 graph.
func quantizedMNIST(t testing.TB, batch, calib int) (*infer.Graph, *infer.Calibration, *infer.Plan) {
	g, c := traceCalibrated(t, mnistNet(t, "cnn"), calib, batch, 1, 28, 28)
	q, err := infer.Quantize(g, c, infer.QuantOptions{})
	require.NoError(t, err)
	p, err := q.Graph.Compile(infer.Options{})
	require.NoError(t, err)
	return g, c, p
}

// traceCalibrated traces net on a random input of shape and calibrates
// it (min-max) on calib random batches of that shape.
func traceCalibrated(t testing.TB, net layers.Layer, calib int, shape ...int) (*infer.Graph, *infer.Calibration) {
	g, err := infer.TraceLayer(net, randInput(t, 3, shape...))
	require.NoError(t, err)
	var batches [][]*tensor.Tensor
	for s := range calib {
		batches = append(batches, []*tensor.Tensor{randInput(t, uint64(10+s), shape...)})
	}
	c, err := infer.Calibrate(g, batches, infer.CalibOptions{})
	require.NoError(t, err)
	return g, c
}
