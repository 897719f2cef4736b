package mnist_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// Batch-1 inference: train the book's MLP briefly, save it, load the
// checkpoint into a fresh model, and classify one test digit.
func Example() {
	trainSet, testSet, err := embedded.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	net, _ := mnist.NewMLP(tensor.NewRNG(1))
	opt, _ := optim.NewAdam(net.Params(), optim.LR(1e-3))
	cfg := mnist.Config{Epochs: 1, Batch: 64, Seed: 1}
	if err := mnist.Train(net, opt, trainSet.Take(2000), testSet.Take(100), cfg, nil, nil); err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "mnist")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "mlp.safetensors")
	if err := checkpoint.Save(path, net.Params(), nil); err != nil {
		fmt.Println(err)
		return
	}

	// In the serving program: a new model, its weights from the file.
	served, _ := mnist.NewMLP(tensor.NewRNG(2))
	if err := checkpoint.Load(path, served.Params(), nil); err != nil {
		fmt.Println(err)
		return
	}
	one := testSet.Take(1) // a batch of one image, [1, 1, 28, 28]
	logits, err := served.Forward(graph.NewEvalTape().Const(one.Tensor("image"))).Tensor()
	if err != nil {
		fmt.Println(err)
		return
	}
	scores := logits.Float32s()
	best := 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
	}
	fmt.Println("input", one.Tensor("image").Shape(), "logits", logits.Shape())
	fmt.Println("label", one.Tensor("label").Int64s()[0], "predicted", best)
	// Output:
	// input [1 1 28 28] logits [1 10]
	// label 7 predicted 7
}
