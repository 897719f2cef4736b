package bench

import (
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// cnnSteps times training steps of the book's MNIST CNN (conv 5×5×20, pool,
// batch norm, conv 5×5×50, pool, fc 10) with Adam 1e-3 on a batch of 64,
// after one warm-up step, and returns samples per second. With reuse, one
// tape serves every step and is released after each (Tape.Release), as
// mnist.Train does; without, every step has a new tape and leaves its
// tensors to the garbage collector.
func cnnSteps(b *testing.B, reuse bool) float64 {
	net, err := mnist.NewCNN(tensor.NewRNG(2))
	require.NoError(b, err)
	step := adamStep(b, net)
	if reuse {
		step = releasingStep(b, net)
	}
	step()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		step()
	}
	return float64(batch*b.N) / time.Since(start).Seconds()
}

// BenchmarkCNNTrainStep is one training step of the MNIST CNN, with
// allocations per step: "release" reuses the step's memory through
// Tape.Release, "new_tape" is the same step without it, for comparison in
// one run.
func BenchmarkCNNTrainStep(b *testing.B) {
	b.Run("release", func(b *testing.B) { b.ReportMetric(cnnSteps(b, true), "samples/s") })
	b.Run("new_tape", func(b *testing.B) { b.ReportMetric(cnnSteps(b, false), "samples/s") })
	b.Run("trainer", func(b *testing.B) { b.ReportMetric(cnnTrainerSteps(b), "samples/s") })
}

// repeated is one batch n times over, as a train.Source.
type repeated struct {
	batch *data.Batch
	n     int
}

func (r repeated) Len() int { return r.n * r.batch.Len() }

func (r repeated) Batches(int) iter.Seq2[*data.Batch, error] {
	return func(yield func(*data.Batch, error) bool) {
		for range r.n {
			if !yield(r.batch, nil) {
				return
			}
		}
	}
}

// cnnTrainerSteps times the "release" step run by the generic trainer
// (train.Run, as models/mnist.Train runs it: loss, non-finite check,
// backward, Adam, release, progress and hooks), after one warm-up step,
// and returns samples per second.
func cnnTrainerSteps(b *testing.B) float64 {
	net, err := mnist.NewCNN(tensor.NewRNG(2))
	require.NoError(b, err)
	images, labels := mlpBatch(b)
	ds, err := data.NewDataset(data.DenseField("image", images), data.DenseField("label", tensor.MustFromSlice(labels)))
	require.NoError(b, err)
	loader, err := data.NewLoader(ds, batch)
	require.NoError(b, err)
	var one *data.Batch
	for bt, err := range loader.Batches(0) {
		require.NoError(b, err)
		one = bt
	}
	opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
	require.NoError(b, err)
	steps := 0
	cfg := train.Config[*data.Batch]{Params: net.Params(), Optimizer: opt, Loss: mnist.Loss(net), Epochs: 1,
		Train:    repeated{one, 1},
		Progress: func(train.Progress) { steps++ }}
	_, err = train.Run(cfg)
	require.NoError(b, err)
	cfg.Train = repeated{one, b.N}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	_, err = train.Run(cfg)
	require.NoError(b, err)
	require.Equal(b, 1+b.N, steps)
	return float64(batch*b.N) / time.Since(start).Seconds()
}

// releasingStep is adamStep on one tape that is released after every step.
func releasingStep(b *testing.B, net mnist.Model) func() {
	images, labels := mlpBatch(b)
	y := tensor.MustFromSlice(labels)
	opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
	require.NoError(b, err)
	tape := graph.NewTape()
	return func() {
		loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(images)), y)
		if err := tape.Backward(loss); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
		tape.Release()
	}
}

// BenchmarkCNNTrainStepVsReference times the same step on Gemm's pure-Go
// reference micro-kernels (gemm.UseReference) and then on the assembly
// ones in one run, and reports samples/s for each and their ratio.
func BenchmarkCNNTrainStepVsReference(b *testing.B) {
	restore := gemm.UseReference()
	ref := cnnSteps(b, true)
	restore()
	fast := cnnSteps(b, true)
	b.ReportMetric(ref, "ref_samples/s")
	b.ReportMetric(fast, "samples/s")
	b.ReportMetric(fast/ref, "speedup")
}
