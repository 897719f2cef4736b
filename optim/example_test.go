package optim_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// A training loop: a new tape per step, Backward, then Step, which also
// zeroes the gradients for the next step. It minimises (x - 3)².
func ExampleNewAdam() {
	x := graph.NewParam("x", tensor.Scalar(0.0))
	sched, err := optim.CosineDecay(0.5, 200, 0.01)
	if err != nil {
		panic(err)
	}
	opt, err := optim.NewAdam([]*graph.Param{x}, optim.LRSchedule(sched))
	if err != nil {
		panic(err)
	}
	for range 200 {
		tape := graph.NewTape()
		loss := graph.Square(graph.Sub(tape.Param(x), tape.Const(tensor.Scalar(3.0))))
		if err := tape.Backward(loss); err != nil {
			panic(err)
		}
		if err := opt.Step(); err != nil {
			panic(err)
		}
	}
	fmt.Printf("x = %.3f\n", x.Value.Float64s()[0])
	// Output: x = 3.000
}
