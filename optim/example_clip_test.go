package optim_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// Clip the gradients of two parameters to a global norm of 1 before a
// step: their norm is 5, so each is scaled by 1/5 and keeps its direction.
func ExampleClipGlobalNorm() {
	a := graph.NewParam("a", tensor.MustFromSlice([]float64{0, 0}, 2))
	b := graph.NewParam("b", tensor.Scalar(0.0))
	tape := graph.NewTape()
	// The loss 3·a₀ + 4·b has gradients [3 0] for a and 4 for b.
	weights := tape.Const(tensor.MustFromSlice([]float64{3, 0}, 2))
	loss := graph.Add(graph.Sum(graph.Mul(weights, tape.Param(a))), graph.Mul(tape.Const(tensor.Scalar(4.0)), tape.Param(b)))
	if err := tape.Backward(loss); err != nil {
		fmt.Println(err)
		return
	}
	norm, err := optim.ClipGlobalNorm([]*graph.Param{a, b}, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("norm %.3f, clipped %.3f and %.3f\n", norm, a.Grad.Float64s(), b.Grad.Float64s())
	// Output: norm 5.000, clipped [0.600 0.000] and [0.800]
}
