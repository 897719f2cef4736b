package word2vec

import (
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
)

// BenchmarkTrainStep times one training step of the book's model (batch
// 100, 2,073 words) with the book's optimizer, on one reused tape.
func BenchmarkTrainStep(b *testing.B) {
	const vocab, batch = 2073, 100
	m, err := New(vocab, tensor.NewRNG(1))
	if err != nil {
		b.Fatal(err)
	}
	opt, err := NewOptimizer(m, LR)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ctx, next := make([]int64, batch*(N-1)), make([]int64, batch)
	for i := range ctx {
		ctx[i] = rng.Int64N(vocab)
	}
	for i := range next {
		next[i] = rng.Int64N(vocab)
	}
	c, y := tensor.MustFromSlice(ctx, batch, N-1), tensor.MustFromSlice(next)
	tape := graph.NewTape()
	b.ReportAllocs()
	for b.Loop() {
		if err := tape.Backward(m.Loss(tape, c, y)); err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(); err != nil {
			b.Fatal(err)
		}
		tape.Release()
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
	_, peak := runlog.RSS()
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
}
