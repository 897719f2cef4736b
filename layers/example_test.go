package layers_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// A sequence classifier from layers of the three kinds: an Embedding
// looks up ids (an int64 tensor, as every id and label), an LSTM maps the
// ragged batch to one output per step (a SeqLayer), SequencePool reduces
// each sequence to a row (a SeqReducer) and Linear scores it (a Layer).
// Sizes go in config structs, and layers.Params lists the parameters of
// them all for the optimizer.
func Example() {
	rng := tensor.NewRNG(1)
	emb, _ := layers.NewEmbedding("emb", layers.EmbeddingConfig{Vocab: 10, Dim: 4}, rng)
	lstm, _ := layers.NewLSTM("lstm", layers.RNNConfig{In: 4, Units: 8, Bidirectional: true}, rng)
	pool := layers.SequencePool{Kind: ops.SequencePoolMax}
	out, _ := layers.NewLinear("out", 16, 2, rng)
	opt, _ := optim.NewAdam(layers.Params(emb, lstm, pool, out), optim.LR(0.05))

	// Two sequences, [1 2 3] and [4 5]; class 1 when the first id is below 3.
	words, _ := tensor.NewRagged(tensor.MustFromSlice([]int64{1, 2, 3, 4, 5}, 5), []int{0, 3, 5})
	labels := tensor.MustFromSlice([]int64{1, 0}, 2)
	logits := func(t *graph.Tape) *graph.Value {
		return out.Forward(pool.Forward(lstm.Forward(emb.LookupSeq(t, words))))
	}
	for range 30 {
		tape := graph.NewTape()
		if err := tape.Backward(graph.SoftmaxCrossEntropy(logits(tape), labels)); err != nil {
			fmt.Println(err)
			return
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
	}
	z, _ := logits(graph.NewEvalTape()).Tensor()
	acc, _ := ops.Accuracy(z, labels)
	fmt.Printf("%d parameters, accuracy %.2f\n", len(layers.Params(emb, lstm, out)), acc)
	// Output: 9 parameters, accuracy 1.00
}
