// Package cifar holds the PaddlePaddle book's image-classification models
// (chapter 3, "Image Classification") for CIFAR-10 written with Plumb's
// layers: resnet_cifar10 and vgg_bn_drop, with depth and width as
// parameters; the per-channel normalisation and the optional augmentation
// (4-pixel padding, random 32×32 crop, horizontal flip) of their input.
package cifar

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// Classes is the number of CIFAR-10 classes.
const Classes = 10

// Net is an image classifier: the per-channel normalisation of its input,
// (x - Mean[c]) / Std[c], then Body, mapping images [N, C, H, W] to logits
// [N, classes]. Mean and Std are non-trainable state of shape [1, C, 1, 1]
// (0 and 1 until SetNorm), so checkpoints carry them and a loaded model
// takes raw images, with pixels in [0, 1] as the data readers give them.
type Net struct {
	Body      layers.Layer
	Mean, Std *graph.Param
}

func newNet(body layers.Layer, channels int) (*Net, error) {
	dt := tensor.Float32
	for _, p := range body.Params() {
		dt = p.Value.DType()
		break
	}
	std, err := tensor.Ones(dt, 1, channels, 1, 1)
	if err != nil {
		return nil, fmt.Errorf("cifar: %w", err)
	}
	return &Net{Body: body, Mean: graph.NewState("input/mean", tensor.Zeros(dt, 1, channels, 1, 1)), Std: graph.NewState("input/std", std)}, nil
}

// SetNorm sets the input normalisation; a deviation of 0 counts as 1 (the
// channel is only centred).
func (n *Net) SetNorm(nm Norm) error {
	if !n.built() {
		return errNotBuilt("SetNorm")
	}
	c := n.Mean.Value.Dim(1)
	if len(nm.Mean) != c || len(nm.Std) != c {
		return fmt.Errorf("cifar: SetNorm: %d means and %d deviations for a net with %d input channels", len(nm.Mean), len(nm.Std), c)
	}
	for i := range c {
		n.Mean.Value.SetAt(i, nm.Mean[i])
		n.Std.Value.SetAt(i, cmp.Or(nm.Std[i], 1))
	}
	return nil
}

// Forward normalises images x [N, C, H, W] and classifies them.
func (n *Net) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	switch {
	case x == nil:
		return t.Fail(errors.New("cifar: Net.Forward: nil images"))
	case t == nil || x.Err() != nil:
		return x
	case !n.built():
		return t.Fail(errNotBuilt("Forward"))
	}
	if s := x.Shape(); len(s) != 4 || s[1] != n.Mean.Value.Dim(1) {
		return t.Fail(fmt.Errorf("cifar: images %v: want [N, %d, H, W]", s, n.Mean.Value.Dim(1)))
	}
	return n.Body.Forward(graph.Div(graph.Sub(x, t.Param(n.Mean)), t.Param(n.Std)))
}

// Params returns the body's parameters, then Mean and Std; nil for a net
// not built by New, NewResNet or NewVGG.
func (n *Net) Params() []*graph.Param {
	if !n.built() {
		return nil
	}
	return append(n.Body.Params(), n.Mean, n.Std)
}

// built reports whether n was made by a constructor: a body and its
// normalisation state.
func (n *Net) built() bool {
	return n != nil && n.Body != nil && n.Mean != nil && n.Mean.Value != nil && n.Std != nil && n.Std.Value != nil
}

func errNotBuilt(method string) error {
	return fmt.Errorf("cifar: Net.%s: a net not built by New, NewResNet or NewVGG", method)
}

// Sizes shapes NewResNet and NewVGG: the depth in weight layers, the
// width (the first stage's channels) and the number of classes.
type Sizes struct {
	Depth, Width, Classes int
}

// New returns the book model called name: "resnet32" (NewResNet depth 32,
// width 16) or "vgg" (NewVGG depth 16, width 64), with 10 classes.
func New(name string, rng *rand.Rand, opts ...layers.Option) (*Net, error) {
	switch name {
	case "resnet32":
		return NewResNet(Sizes{Depth: 32, Width: 16, Classes: Classes}, rng, opts...)
	case "vgg":
		return NewVGG(Sizes{Depth: 16, Width: 64, Classes: Classes}, rng, opts...)
	}
	return nil, fmt.Errorf("cifar: unknown model %q (want resnet32 or vgg)", name)
}
