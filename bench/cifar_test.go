package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// cifarBatch is the batch size of the book's CIFAR-10 recipe.
const cifarBatch = 128

// cifarStep returns one training step of the book model name (Adam 1e-3,
// batch 128 of random normal images, one tape released after each step as
// cifar.Train does).
func cifarStep(b *testing.B, name string) func() {
	rng := tensor.NewRNG(1)
	net, err := cifar.New(name, rng)
	require.NoError(b, err)
	x, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, cifarBatch, 3, 32, 32)
	require.NoError(b, err)
	labels := make([]int64, cifarBatch)
	for i := range labels {
		labels[i] = int64(rng.IntN(cifar.Classes))
	}
	y := tensor.MustFromSlice(labels)
	opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
	require.NoError(b, err)
	tape := graph.NewTape()
	return func() {
		loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(x)), y)
		if err := tape.Backward(loss); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
		tape.Release()
	}
}

// BenchmarkCIFARTrainStep times training steps (forward, backward, Adam
// update) of the book's ResNet-32 and VGG-16 at batch 128, after two
// warm-up steps, in samples per second and per CPU-second (all threads);
// bench/cifar_speed.sh runs it beside the Keras and PyTorch steps.
func BenchmarkCIFARTrainStep(b *testing.B) {
	for _, name := range []string{"resnet32", "vgg"} {
		b.Run(name, func(b *testing.B) {
			step := cifarStep(b, name)
			step()
			step()
			b.ResetTimer()
			start, cpu := time.Now(), cpuSeconds()
			for range b.N {
				step()
			}
			b.ReportMetric(float64(cifarBatch*b.N)/time.Since(start).Seconds(), "samples/s")
			if used := cpuSeconds() - cpu; used > 0 {
				b.ReportMetric(float64(cifarBatch*b.N)/used, "samples/cpu-s")
			}
		})
	}
}
