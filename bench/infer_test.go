package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// BenchmarkInferBatch1 is the latency of one digit through the book's
// MNIST MLP and CNN on an inference tape released after each image, as a
// server answering one request at a time would run them: the m = 1 GEMMs
// run on the row kernels, whatever GEMM path the CPU chose.
func BenchmarkInferBatch1(b *testing.B) {
	for _, name := range []string{"mlp", "cnn"} {
		b.Run(name, func(b *testing.B) {
			net, err := mnist.New(name, tensor.NewRNG(2))
			require.NoError(b, err)
			x, err := tensor.RandUniform(tensor.NewRNG(3), tensor.Float32, 0, 1, 1, 1, 28, 28)
			require.NoError(b, err)
			tape := graph.NewEvalTape()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := net.Forward(tape.Const(x)).Tensor(); err != nil {
					b.Fatal(err)
				}
				tape.Release()
			}
		})
	}
}
