package layers

import (
	"testing"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// BenchmarkEmbeddingStep times one training step of a [100000, 64] table:
// lookup of a 32×20 batch of ids, Backward and an SGD step, with the
// table's sparse gradient (only the looked-up rows) and with it made dense
// before the step (the dense [V, D] gradient and update of every row).
func BenchmarkEmbeddingStep(b *testing.B) {
	const vocab, dim, batch, steps = 100000, 64, 32, 20
	for _, dense := range []bool{false, true} {
		name := "sparse"
		if dense {
			name = "dense"
		}
		b.Run(name, func(b *testing.B) {
			emb, err := NewEmbedding("emb", EmbeddingConfig{Vocab: vocab, Dim: dim}, tensor.NewRNG(1))
			if err != nil {
				b.Fatal(err)
			}
			opt, err := optim.NewSGD(emb.Params(), optim.LR(0.1))
			if err != nil {
				b.Fatal(err)
			}
			rng := tensor.NewRNG(2)
			idx := make([]int64, batch*steps)
			for i := range idx {
				idx[i] = rng.Int64N(vocab)
			}
			ids := tensor.MustFromSlice(idx, batch, steps)
			b.ReportAllocs()
			for b.Loop() {
				tape := graph.NewTape()
				if err := tape.Backward(graph.Sum(emb.Lookup(tape, ids))); err != nil {
					b.Fatal(err)
				}
				if dense {
					g, err := emb.Table.DenseGrad()
					if err != nil {
						b.Fatal(err)
					}
					emb.Table.Grad, emb.Table.SparseGrad = g, nil
				}
				if err := opt.Step(); err != nil {
					b.Fatal(err)
				}
				emb.Table.Grad, emb.Table.SparseGrad = nil, nil // each step builds its gradient anew
			}
		})
	}
}
