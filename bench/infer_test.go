package bench

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/models/translate"
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

// inferModel is one of issue 34's models at a batch size: its forward pass
// and an input.
type inferModel struct {
	name    string
	forward infer.Forward
	in      []*tensor.Tensor
}

// inferModels returns the MNIST CNN, ResNet-32, the sentiment text CNN
// and stacked LSTM and the translation encoder (book sizes, a 5000-word
// dictionary, sentences of 5 to 27 words) at batch.
func inferModels(b *testing.B, batch int) []inferModel {
	img := func(seed uint64, shape ...int) []*tensor.Tensor {
		x, err := tensor.RandUniform(tensor.NewRNG(seed), tensor.Float32, 0, 1, shape...)
		require.NoError(b, err)
		return []*tensor.Tensor{x}
	}
	layer := func(l interface {
		Forward(*graph.Value) *graph.Value
	}) infer.Forward {
		return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value { return l.Forward(tape.Const(in[0])) }
	}
	cnn, err := mnist.New("cnn", tensor.NewRNG(1))
	require.NoError(b, err)
	resnet, err := cifar.New("resnet32", tensor.NewRNG(1))
	require.NoError(b, err)
	ms := []inferModel{
		{"mnist_cnn", layer(cnn), img(2, batch, 1, 28, 28)},
		{"resnet32", layer(resnet), img(3, batch, 3, 32, 32)},
	}
	const vocab = 5000
	off, n := []int{0}, 0
	for i := 0; i < batch; i++ {
		n += 5 + (7*i)%23
		off = append(off, n)
	}
	rng := tensor.NewRNG(4)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(rng.IntN(vocab))
	}
	words := []*tensor.Tensor{tensor.MustFromSlice(ids, n)}
	for _, name := range []string{"cnn", "lstm"} {
		m, err := sentiment.New(name, vocab, tensor.NewRNG(5))
		require.NoError(b, err)
		ms = append(ms, inferModel{"text_" + name, func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return m.Logits(tape, &tensor.Ragged{Values: in[0], Offsets: off})
		}, words})
	}
	tr, err := translate.New(translate.DefaultSizes(vocab, vocab), tensor.NewRNG(6))
	require.NoError(b, err)
	return append(ms, inferModel{"translate_encoder", func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return tr.Encode(tape, &tensor.Ragged{Values: in[0], Offsets: off}).H
	}, words})
}

// BenchmarkInferPlan times each model's eval tape (released after every
// call) and its compiled plan (infer, all passes) one after the other, at
// batch 1 and 64; run it with -cpu 1,2 and -count for interleaved rounds.
// The plan also reports its CPU time per call (cpu-ms/op), which swings
// less than the wall time with the other work on a shared machine.
func BenchmarkInferPlan(b *testing.B) {
	for _, batch := range []int{1, 64} {
		for _, m := range inferModels(b, batch) {
			b.Run(fmt.Sprintf("%s/b%d/tape", m.name, batch), func(b *testing.B) {
				tape := graph.NewEvalTape()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.forward(tape, m.in).Tensor(); err != nil {
						b.Fatal(err)
					}
					tape.Release()
				}
			})
			b.Run(fmt.Sprintf("%s/b%d/plan", m.name, batch), func(b *testing.B) {
				g, err := infer.Trace(m.forward, m.in...)
				require.NoError(b, err)
				p, err := g.Compile(infer.Options{})
				require.NoError(b, err)
				out := tensor.Empty(p.Outputs()[0].DType, p.Outputs()[0].Shape...)
				require.NoError(b, p.Run(out, m.in...))
				b.ReportAllocs()
				start := cpuSeconds()
				for b.Loop() {
					if err := p.Run(out, m.in...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuSeconds()-start)*1e3/float64(b.N), "cpu-ms/op")
			})
		}
	}
}
