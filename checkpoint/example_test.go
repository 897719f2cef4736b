package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// Save a layer's parameters with its optimizer's state, and load them into
// a second layer of the same shape: it then computes what the first does.
func ExampleSave() {
	dir, _ := os.MkdirTemp("", "checkpoint")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	trained, _ := layers.NewLinear("dense", 3, 2, tensor.NewRNG(1))
	opt, _ := optim.NewAdam(trained.Params(), optim.LR(0.01))
	x := tensor.MustFromSlice([]float32{1, 2, 3}, 1, 3)
	tape := graph.NewTape()
	if err := tape.Backward(graph.Sum(trained.Forward(tape.Const(x)))); err != nil {
		fmt.Println(err)
		return
	}
	if err := opt.Step(); err != nil { // one step, so the optimizer has state to save
		fmt.Println(err)
		return
	}
	if err := checkpoint.Save(path, trained.Params(), opt); err != nil {
		fmt.Println(err)
		return
	}

	// Read lists what the file holds: parameters, then the optimizer's state.
	tensors, _, err := checkpoint.Read(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	names := make([]string, 0, len(tensors))
	for name := range tensors {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Println(name, tensors[name].Shape())
	}

	// A fresh layer, initialised from another seed, loaded for inference
	// (a nil optimizer ignores the saved optimizer state).
	restored, _ := layers.NewLinear("dense", 3, 2, tensor.NewRNG(2))
	if err := checkpoint.Load(path, restored.Params(), nil); err != nil {
		fmt.Println(err)
		return
	}
	a, _ := trained.Forward(graph.NewEvalTape().Const(x)).Tensor()
	b, _ := restored.Forward(graph.NewEvalTape().Const(x)).Tensor()
	fmt.Println("same output:", slices.Equal(a.Float32s(), b.Float32s()))
	// Output:
	// dense/bias [2]
	// dense/kernel [3 2]
	// optimizer/dense/bias/m [2]
	// optimizer/dense/bias/v [2]
	// optimizer/dense/kernel/m [3 2]
	// optimizer/dense/kernel/v [3 2]
	// optimizer/iterations []
	// same output: true
}
