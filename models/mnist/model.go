// Package mnist holds the PaddlePaddle book's digit-recognition models
// (chapter "Recognize Digits") written with Plumb's layers, and the loop
// that trains and evaluates them.
package mnist

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
)

// Model maps images [N, 1, 28, 28] to logits [N, 10].
type Model interface {
	layers.Layer
}

// NewMLP returns the book's multilayer perceptron: 784-128-64-10 with relu
// on the hidden layers. The softmax lives in the loss, which takes logits.
func NewMLP(rng *rand.Rand, opts ...layers.Option) (Model, error) {
	fc1, err := layers.NewLinear("fc1", 784, 128, rng, opts...)
	if err != nil {
		return nil, err
	}
	fc2, err := layers.NewLinear("fc2", 128, 64, rng, opts...)
	if err != nil {
		return nil, err
	}
	fc3, err := layers.NewLinear("fc3", 64, 10, rng, opts...)
	if err != nil {
		return nil, err
	}
	relu := layers.Activation(graph.Relu)
	return layers.Sequential{layers.Flatten{}, fc1, relu, fc2, relu, fc3}, nil
}

// NewCNN returns the book's convolutional network: conv 5×5×20 + relu +
// max pool 2 → batch norm → conv 5×5×50 + relu + max pool 2 → fc 10
// (Paddle's simple_img_conv_pool twice, VALID convolutions).
func NewCNN(rng *rand.Rand, opts ...layers.Option) (Model, error) {
	conv1, err := layers.NewConv2D("conv1", layers.Conv2DConfig{In: 1, Out: 20, KH: 5, KW: 5}, rng, opts...)
	if err != nil {
		return nil, err
	}
	bn, err := layers.NewBatchNorm("bn1", 20, opts...)
	if err != nil {
		return nil, err
	}
	conv2, err := layers.NewConv2D("conv2", layers.Conv2DConfig{In: 20, Out: 50, KH: 5, KW: 5}, rng, opts...)
	if err != nil {
		return nil, err
	}
	fc, err := layers.NewLinear("fc", 50*4*4, 10, rng, opts...)
	if err != nil {
		return nil, err
	}
	relu := layers.Activation(graph.Relu)
	pool := layers.MaxPool2D{Attrs: ops.Pool2DAttrs{Kernel: [2]int{2, 2}}}
	return layers.Sequential{conv1, relu, pool, bn, conv2, relu, pool, layers.Flatten{}, fc}, nil
}

// New returns the model called name ("mlp" or "cnn").
func New(name string, rng *rand.Rand, opts ...layers.Option) (Model, error) {
	switch name {
	case "mlp":
		return NewMLP(rng, opts...)
	case "cnn":
		return NewCNN(rng, opts...)
	}
	return nil, fmt.Errorf("mnist: unknown model %q (want mlp or cnn)", name)
}
