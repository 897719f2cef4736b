package plumb_test

import (
	"fmt"
	"log"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// Train a two-layer network to compute XOR, then check it in inference
// mode. README.md shows this function's body as the library's first
// example; TestReadmeExampleIsExample keeps the two the same.
func Example() {
	rng := tensor.NewRNG(1)
	hidden, _ := layers.NewLinear("hidden", 2, 8, rng)
	out, _ := layers.NewLinear("out", 8, 2, rng)
	net := layers.Sequential{hidden, layers.Activation(graph.Tanh), out}
	opt, _ := optim.NewAdam(net.Params(), optim.LR(0.05))

	x := tensor.MustFromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2) // four inputs
	y := tensor.MustFromSlice([]int64{0, 1, 1, 0})                     // their XOR
	tape := graph.NewTape()
	for range 200 {
		loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(x)), y)
		if err := tape.Backward(loss); err != nil { // the step's first error, if any
			log.Fatal(err)
		}
		if err := opt.Step(); err != nil { // updates, then clears the gradients
			log.Fatal(err)
		}
		tape.Release() // the next step reuses this step's memory
	}

	logits, err := net.Forward(graph.NewEvalTape().Const(x)).Tensor() // inference mode
	if err != nil {
		log.Fatal(err)
	}
	acc, _ := ops.Accuracy(logits, y)
	fmt.Printf("accuracy %.2f\n", acc)
	// Output: accuracy 1.00
}
