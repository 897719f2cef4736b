package train_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// A run interrupted after 2 of 4 epochs and resumed from its StatePath
// file ends with the weights of a run that was never interrupted: the file
// holds the parameters, the optimizer's state and where the run was.
func ExampleConfig_resume() {
	src := line{{tensor.MustFromSlice([]float32{-1, 0, 1, 2}, 4, 1), tensor.MustFromSlice([]float32{-1, 1, 3, 5}, 4, 1)}}
	dir, _ := os.MkdirTemp("", "train")
	defer os.RemoveAll(dir)
	state := filepath.Join(dir, "state.safetensors")

	// run trains a fresh model for epochs, saving to save and resuming from
	// resume when they are set, and returns its weight.
	run := func(epochs int, save, resume string) float32 {
		model, _ := layers.NewLinear("fit", 1, 1, tensor.NewRNG(1))
		opt, _ := optim.NewAdam(model.Params(), optim.LR(0.1))
		_, err := train.Run(train.Config[pair]{
			Params: model.Params(), Optimizer: opt, Train: src, Epochs: epochs,
			StatePath: save, ResumeFrom: resume,
			Loss: func(t *graph.Tape, b pair) (*graph.Value, int) {
				return graph.MSE(model.Forward(t.Const(b.x)), t.Const(b.y)), b.x.Shape()[0]
			},
		})
		if err != nil {
			fmt.Println(err)
		}
		return model.Params()[0].Value.Float32s()[0]
	}
	straight := run(4, "", "")
	half := run(2, state, "")       // stopped after epoch 2
	resumed := run(4, state, state) // epochs 3 and 4
	fmt.Printf("after 2 epochs %.3f, after 4 %.3f, resumed %.3f\n", half, straight, resumed)
	fmt.Println("same weight:", straight == resumed)
	// Output:
	// after 2 epochs -1.315, after 4 -1.116, resumed -1.116
	// same weight: true
}
