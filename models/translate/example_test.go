package translate_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// A small encoder-decoder (the package trains DefaultSizes) learns two
// sentence pairs by teacher forcing. Sources and targets are ragged id
// batches; the target ids use 1 for <s> and 2 for <e>.
func ExampleModel_Loss() {
	m, err := translate.New(translate.Sizes{Src: 10, Trg: 10, Emb: 8, Hidden: 8, Attention: 8}, tensor.NewRNG(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	ragged := func(offsets []int, ids ...int64) *tensor.Ragged {
		r, _ := tensor.NewRagged(tensor.MustFromSlice(ids, len(ids)), offsets)
		return r
	}
	src := ragged([]int{0, 3, 5}, 4, 5, 6, 7, 8)  // two sources of 3 and 2 words
	trg := ragged([]int{0, 3, 5}, 1, 6, 7, 1, 9)  // <s> w1 w2, <s> w1
	next := ragged([]int{0, 3, 5}, 6, 7, 2, 9, 2) // w1 w2 <e>, w1 <e>
	opt, _ := optim.NewAdam(m.Params(), optim.LR(0.05))
	for step := range 21 {
		tape := graph.NewTape()
		loss, words := m.Loss(tape, src, trg, next)
		if err := tape.Backward(loss); err != nil {
			fmt.Println(err)
			return
		}
		if step%10 == 0 {
			l, _ := loss.Tensor()
			fmt.Printf("step %2d: loss %.2f over %d words\n", step, l.At(0), words)
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// step  0: loss 2.34 over 5 words
	// step 10: loss 0.14 over 5 words
	// step 20: loss 0.01 over 5 words
}
