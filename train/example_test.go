package train_test

import (
	"fmt"
	"iter"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// pair is one batch: inputs x [n, 1] and targets y [n, 1].
type pair struct{ x, y *tensor.Tensor }

// line is a training set of points on y = 2x + 1, in batches of 4. Any type
// with Len and Batches is a train.Source: the trainer knows no batch type.
type line []pair

// Len is the number of examples in one pass.
func (l line) Len() int { return 4 * len(l) }

// Batches yields the batches of one pass, in the same order every epoch,
// as a resumed run needs.
func (l line) Batches(epoch int) iter.Seq2[pair, error] {
	return func(yield func(pair, error) bool) {
		for _, b := range l {
			if !yield(b, nil) {
				return
			}
		}
	}
}

// A custom training loop: train.Run drives the epochs, the optimizer steps
// and the hooks; the caller says only how a batch becomes a loss.
func ExampleRun() {
	var src line
	for b := range 4 {
		xs := make([]float32, 4)
		ys := make([]float32, 4)
		for i := range xs {
			xs[i] = float32(4*b+i)/8 - 1
			ys[i] = 2*xs[i] + 1
		}
		src = append(src, pair{tensor.MustFromSlice(xs, 4, 1), tensor.MustFromSlice(ys, 4, 1)})
	}

	model, _ := layers.NewLinear("fit", 1, 1, tensor.NewRNG(1))
	opt, _ := optim.NewSGD(model.Params(), optim.LR(0.1))
	res, err := train.Run(train.Config[pair]{
		Params:    model.Params(),
		Optimizer: opt,
		Train:     src,
		Epochs:    30,
		Loss: func(t *graph.Tape, b pair) (*graph.Value, int) {
			return graph.MSE(model.Forward(t.Const(b.x)), t.Const(b.y)), b.x.Shape()[0]
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range res.Epochs {
		if e.Epoch == 1 || e.Epoch%10 == 0 {
			fmt.Printf("epoch %2d: loss %.3f\n", e.Epoch, e.TrainLoss)
		}
	}
	w := model.Params()[0].Value.Float32s()[0]
	b := model.Params()[1].Value.Float32s()[0]
	fmt.Printf("y = %.2fx + %.2f\n", w, b)
	// Output:
	// epoch  1: loss 4.357
	// epoch 10: loss 0.019
	// epoch 20: loss 0.000
	// epoch 30: loss 0.000
	// y = 2.00x + 1.00
}
