package word2vec_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/word2vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// The N-gram model learns to predict the fifth word from the four before it
// in a ten-word sequence that repeats (0 1 2 … 9 0 1 …), then completes a
// context it has seen.
func ExampleModel_Logits() {
	const vocab = 10
	m, err := word2vec.New(vocab, tensor.NewRNG(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	var context, next []int64
	for i := range int64(vocab) {
		for k := range int64(word2vec.N - 1) {
			context = append(context, (i+k)%vocab)
		}
		next = append(next, (i+word2vec.N-1)%vocab)
	}
	ctx := tensor.MustFromSlice(context, vocab, word2vec.N-1) // [10, 4]
	want := tensor.MustFromSlice(next, vocab)

	opt, _ := optim.NewAdam(m.Params(), optim.LR(0.01))
	for range 50 {
		tape := graph.NewTape()
		if err := tape.Backward(m.Loss(tape, ctx, want)); err != nil {
			fmt.Println(err)
			return
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
	}
	logits, _ := m.Logits(graph.NewEvalTape(), ctx).Tensor()
	acc, _ := ops.Accuracy(logits, want)
	query := tensor.MustFromSlice([]int64{3, 4, 5, 6}, 1, word2vec.N-1)
	guess, _ := m.Logits(graph.NewEvalTape(), query).Tensor()
	best, _ := ops.ArgMax(guess, 1)
	fmt.Printf("accuracy %.2f; after 3 4 5 6 comes %d\n", acc, best.Int64s()[0])
	// Output: accuracy 1.00; after 3 4 5 6 comes 7
}
