// Package cifar holds the PaddlePaddle book's image-classification models
// (chapter 3, "Image Classification") for CIFAR-10 written with Plumb's
// layers: resnet_cifar10 and vgg_bn_drop, with depth and width as
// parameters; the per-channel normalisation and the optional augmentation
// (4-pixel padding, random 32×32 crop, horizontal flip) of their input.
package cifar

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/layers"
)

// Classes is the number of CIFAR-10 classes.
const Classes = 10

// Model maps images [N, 3, 32, 32] to logits [N, classes].
type Model interface {
	layers.Layer
}

// New returns the book model called name: "resnet32" (NewResNet depth 32,
// width 16) or "vgg" (NewVGG depth 16, width 64), with 10 classes.
func New(name string, rng *rand.Rand, opts ...layers.Option) (Model, error) {
	switch name {
	case "resnet32":
		return NewResNet(32, 16, Classes, rng, opts...)
	case "vgg":
		return NewVGG(16, 64, Classes, rng, opts...)
	}
	return nil, fmt.Errorf("cifar: unknown model %q (want resnet32 or vgg)", name)
}
