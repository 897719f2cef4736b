package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// cnnSteps times training steps of the book's MNIST CNN (conv 5×5×20, pool,
// batch norm, conv 5×5×50, pool, fc 10) with Adam 1e-3 on a batch of 64,
// after one warm-up step, and returns samples per second.
func cnnSteps(b *testing.B) float64 {
	net, err := mnist.NewCNN(tensor.NewRNG(2))
	require.NoError(b, err)
	step := adamStep(b, net)
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
// allocations per step.
func BenchmarkCNNTrainStep(b *testing.B) {
	b.ReportMetric(cnnSteps(b), "samples/s")
}

// BenchmarkCNNTrainStepVsReference times the same step on Gemm's pure-Go
// reference micro-kernels (gemm.UseReference) and then on the assembly
// ones in one run, and reports samples/s for each and their ratio.
func BenchmarkCNNTrainStepVsReference(b *testing.B) {
	restore := gemm.UseReference()
	ref := cnnSteps(b)
	restore()
	fast := cnnSteps(b)
	b.ReportMetric(ref, "ref_samples/s")
	b.ReportMetric(fast, "samples/s")
	b.ReportMetric(fast/ref, "speedup")
}
