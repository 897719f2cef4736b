// Package bench holds side-by-side benchmarks: Plumb against the Go
// alternatives here (Gorgonia), and scripts for TensorFlow and PyTorch.
package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	G "gorgonia.org/gorgonia"
	gt "gorgonia.org/tensor"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

const batch = 64

// mlpBatch is one synthetic MNIST-shaped batch: pixels in [0,1), labels 0..9.
func mlpBatch(t testing.TB) (images *tensor.Tensor, labels []int64) {
	rng := tensor.NewRNG(1)
	images, err := tensor.RandUniform(rng, tensor.Float32, 0, 1, batch, 1, 28, 28)
	require.NoError(t, err)
	labels = make([]int64, batch)
	for i := range labels {
		labels[i] = int64(rng.IntN(10))
	}
	return images, labels
}

func reportSamples(b *testing.B, start time.Time) {
	b.ReportMetric(float64(batch*b.N)/time.Since(start).Seconds(), "samples/s")
}

// BenchmarkMLPTrainPlumb is one training step of the book's MLP
// (784-128-64-10, relu) with Adam 1e-3 on a batch of 64.
func BenchmarkMLPTrainPlumb(b *testing.B) {
	net, err := mnist.NewMLP(tensor.NewRNG(2))
	require.NoError(b, err)
	step := adamStep(b, net)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		step()
	}
	reportSamples(b, start)
}

// adamStep returns one training step of net on mlpBatch's batch: mean
// softmax cross-entropy, backward, Adam 1e-3.
func adamStep(b *testing.B, net mnist.Model) func() {
	images, labels := mlpBatch(b)
	y := tensor.MustFromSlice(labels)
	opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
	require.NoError(b, err)
	return func() {
		tape := graph.NewTape()
		loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(images)), y)
		if err := tape.Backward(loss); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMLPTrainGorgonia is the same step in Gorgonia v0.9.18: the same
// layers, Glorot-uniform weights, mean softmax cross-entropy and Adam 1e-3,
// compiled once into a TapeMachine (Gorgonia's fastest executor).
func BenchmarkMLPTrainGorgonia(b *testing.B) {
	images, labels := mlpBatch(b)
	onehot := make([]float32, batch*10)
	for i, l := range labels {
		onehot[i*10+int(l)] = 1
	}
	g := G.NewGraph()
	x := G.NewMatrix(g, G.Float32, G.WithShape(batch, 784), G.WithName("x"))
	yy := G.NewMatrix(g, G.Float32, G.WithShape(batch, 10), G.WithName("y"))
	dense := func(in *G.Node, i, o int, name string) (*G.Node, G.Nodes) {
		w := G.NewMatrix(g, G.Float32, G.WithShape(i, o), G.WithName(name+"w"), G.WithInit(G.GlorotU(1)))
		bias := G.NewMatrix(g, G.Float32, G.WithShape(1, o), G.WithName(name+"b"), G.WithInit(G.Zeroes()))
		return G.Must(G.BroadcastAdd(G.Must(G.Mul(in, w)), bias, nil, []byte{0})), G.Nodes{w, bias}
	}
	h1, p1 := dense(x, 784, 128, "fc1")
	h2, p2 := dense(G.Must(G.Rectify(h1)), 128, 64, "fc2")
	logits, p3 := dense(G.Must(G.Rectify(h2)), 64, 10, "fc3")
	logp := G.Must(G.Log(G.Must(G.SoftMax(logits))))
	loss := G.Must(G.Neg(G.Must(G.Mean(G.Must(G.Sum(G.Must(G.HadamardProd(logp, yy)), 1))))))
	learnables := append(append(p1, p2...), p3...)
	_, err := G.Grad(loss, learnables...)
	require.NoError(b, err)
	vm := G.NewTapeMachine(g, G.BindDualValues(learnables...))
	defer vm.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(1e-3))
	require.NoError(b, G.Let(x, gt.New(gt.WithShape(batch, 784), gt.WithBacking(images.Float32s()))))
	require.NoError(b, G.Let(yy, gt.New(gt.WithShape(batch, 10), gt.WithBacking(onehot))))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		if err := solver.Step(G.NodesToValueGrads(learnables)); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	reportSamples(b, start)
}
