package bert

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/graph"
)

// BenchmarkForwardBase times bert-base inference (BaseConfig, random
// weights) at sequence length 128, batch 1 and 8, on an inference tape;
// bench/bert_speed.py times transformers' BertModel the same way.
//
//	go test ./models/bert -run '^$' -bench ForwardBase -benchtime 5x
func BenchmarkForwardBase(b *testing.B) {
	m, err := New(BaseConfig(), rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		b.Fatal(err)
	}
	for _, batch := range []int{1, 8} {
		b.Run(fmt.Sprintf("batch%d_seq128", batch), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			ids := make([][]int, batch)
			for i := range ids {
				for range 128 {
					ids[i] = append(ids[i], 1+rng.IntN(m.Config.VocabSize-1))
				}
			}
			in, err := NewBatch(ids, nil)
			if err != nil {
				b.Fatal(err)
			}
			tape := graph.NewEvalTape()
			for b.Loop() {
				h, _ := m.Forward(tape, in)
				if _, err := h.Tensor(); err != nil {
					b.Fatal(err)
				}
				tape.Release()
			}
		})
	}
}
