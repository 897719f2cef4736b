package layers_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// Summary runs the model once on an example input and lists each layer's
// output shape and parameters, as Keras's model.summary() does.
func ExampleSummary() {
	rng := tensor.NewRNG(1)
	hidden, _ := layers.NewLinear("hidden", 784, 128, rng)
	out, _ := layers.NewLinear("out", 128, 10, rng)
	net := layers.Sequential{layers.Flatten{}, hidden, layers.Activation(graph.Relu), out}
	s, err := layers.Summary(net, func(t *graph.Tape) *graph.Value {
		return net.Forward(t.Const(tensor.Zeros(tensor.Float32, 1, 1, 28, 28)))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(s)
	// Output:
	// layer   kind        output shape  params
	// -       flatten     [1 784]       0
	// hidden  linear      [1 128]       100480
	// -       activation  [1 128]       0
	// out     linear      [1 10]        1290
	// output [1 10]
	// total params: 101770 (trainable 101770, non-trainable 0)
}
