package sentiment

import (
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
)

// benchBatch is a batch of 128 random reviews of 100 to 359 words (IMDB's
// mean is about 233) over the book's 5,147-word dictionary, the same
// batch bench/book_torch.py and book_keras.py time with --speed.
func benchBatch() (*tensor.Ragged, *tensor.Tensor, int) {
	rng := rand.New(rand.NewPCG(1, 2))
	seqs := make([][]int64, Batch)
	labels := make([]int64, Batch)
	words := 0
	for i := range seqs {
		s := make([]int64, 100+rng.IntN(260))
		for k := range s {
			s[k] = rng.Int64N(5147)
		}
		seqs[i], labels[i] = s, int64(i%2)
		words += len(s)
	}
	return data.SeqField("words", seqs).Ragged, tensor.MustFromSlice(labels), words
}

// BenchmarkTrainStep times one training step of each net with the book's
// optimizer on one reused tape; words/s counts the reviews' words.
func BenchmarkTrainStep(b *testing.B) {
	words, labels, n := benchBatch()
	for _, name := range []string{"cnn", "lstm"} {
		b.Run(name, func(b *testing.B) {
			m, err := New(name, 5147, tensor.NewRNG(1))
			if err != nil {
				b.Fatal(err)
			}
			opt, err := NewOptimizer(m, LR)
			if err != nil {
				b.Fatal(err)
			}
			tape := graph.NewTape()
			b.ReportAllocs()
			for b.Loop() {
				if err := tape.Backward(graph.SoftmaxCrossEntropy(m.Logits(tape, words), labels)); err != nil {
					b.Fatal(err)
				}
				if err := opt.Step(); err != nil {
					b.Fatal(err)
				}
				tape.Release()
			}
			b.ReportMetric(float64(Batch*b.N)/b.Elapsed().Seconds(), "samples/s")
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "words/s")
			_, peak := runlog.RSS()
			b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
		})
	}
}
