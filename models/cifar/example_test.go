package cifar_test

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/tensor"
)

// A small ResNet (depth 8, width 4; the book's is resnet32 at width 16)
// classifies a batch of two 8×8 RGB images in inference mode.
func ExampleNewResNet() {
	net, err := cifar.NewResNet(cifar.Sizes{Depth: 8, Width: 4, Classes: cifar.Classes}, tensor.NewRNG(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	size := 0
	for _, p := range net.Params() {
		size += p.Value.Size()
	}
	images, _ := tensor.Full(tensor.Float32, 0.5, 2, 3, 8, 8) // pixels in [0, 1]
	logits, err := net.Forward(graph.NewEvalTape().Const(images)).Tensor()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(net.Params()), "tensors,", size, "numbers; logits", logits.Shape())
	// Output: 52 tensors, 5416 numbers; logits [2 10]
}
