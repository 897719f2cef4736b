package plumb_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// Train a two-layer network to compute XOR, then check it in inference mode.
func Example() {
	rng := tensor.NewRNG(1)
	hidden, _ := layers.NewLinear("hidden", 2, 8, rng)
	out, _ := layers.NewLinear("out", 8, 2, rng)
	net := layers.Sequential{hidden, layers.Activation(graph.Tanh), out}
	opt, _ := optim.NewAdam(net.Params(), optim.LR(0.05))

	x := tensor.MustFromSlice([]float32{0, 0, 0, 1, 1, 0, 1, 1}, 4, 2)
	y := tensor.MustFromSlice([]int64{0, 1, 1, 0})
	for step := 0; step < 200; step++ {
		tape := graph.NewTape()
		loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(x)), y)
		if err := tape.Backward(loss); err != nil { // the first error of the step, if any
			fmt.Println(err)
			return
		}
		if err := opt.Step(); err != nil {
			fmt.Println(err)
			return
		}
	}

	logits, err := net.Forward(graph.NewEvalTape().Const(x)).Tensor()
	if err != nil {
		fmt.Println(err)
		return
	}
	acc, _ := ops.Accuracy(logits, y)
	fmt.Printf("accuracy %.2f\n", acc)
	// Output: accuracy 1.00
}
