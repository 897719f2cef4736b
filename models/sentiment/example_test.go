package sentiment_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

// Both book models read a ragged batch of word ids, here two reviews of 5
// and 3 words over a 50-word dictionary, and give two class logits each.
func ExampleNew() {
	words, _ := tensor.NewRagged(tensor.MustFromSlice([]int64{4, 17, 8, 23, 2, 9, 41, 3}, 8), []int{0, 5, 8})
	for _, name := range []string{"cnn", "lstm"} {
		m, err := sentiment.New(name, 50, tensor.NewRNG(1))
		if err != nil {
			fmt.Println(err)
			return
		}
		logits, err := m.Logits(graph.NewEvalTape(), words).Tensor()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(name, "logits", logits.Shape())
	}
	// Output:
	// cnn logits [2 2]
	// lstm logits [2 2]
}
