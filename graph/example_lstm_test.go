package graph_test

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/tensor"
)

// An LSTM over a ragged batch: three sequences of 3, 1 and 2 steps stored
// back to back, with no padding. Each sequence's final state is its own last
// step, and the gradient reaches the weights through every real step only.
func ExampleLSTM() {
	const in, units = 2, 3
	rng := tensor.NewRNG(1)
	param := func(name string, shape ...int) *graph.Param {
		t, _ := initializer.GlorotUniform(rng, tensor.Float32, shape...)
		return graph.NewParam(name, t)
	}
	w, u := param("w", in, 4*units), param("u", units, 4*units)
	b := graph.NewParam("b", tensor.Zeros(tensor.Float32, 4*units))

	// Six steps in all; sequence i is rows offsets[i] to offsets[i+1].
	steps, _ := tensor.RandNormal(rng, tensor.Float32, 0, 1, 6, in)
	batch, _ := tensor.NewRagged(steps, []int{0, 3, 4, 6})

	tape := graph.NewTape()
	x := tape.ConstSeq(batch)
	hs, final := graph.LSTM(x, graph.LSTMWeights{W: tape.Param(w), U: tape.Param(u), B: tape.Param(b)}, nil, false)
	if err := tape.Backward(graph.Sum(final.H)); err != nil {
		fmt.Println(err)
		return
	}
	all, _ := hs.Values.Tensor()
	last, _ := final.H.Tensor()
	fmt.Println("lengths", x.Lengths(), "states", all.Shape(), "final", last.Shape())

	rows := all.Float32s()
	for i, end := range hs.Offsets[1:] {
		fmt.Println("sequence", i, "ends at its last step:",
			slices.Equal(rows[(end-1)*units:end*units], last.Float32s()[i*units:(i+1)*units]))
	}
	fmt.Println("dW", w.Grad.Shape(), "dU", u.Grad.Shape())
	// Output:
	// lengths [3 1 2] states [6 3] final [3 3]
	// sequence 0 ends at its last step: true
	// sequence 1 ends at its last step: true
	// sequence 2 ends at its last step: true
	// dW [2 12] dU [3 12]
}
