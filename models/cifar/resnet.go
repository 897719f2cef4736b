package cifar

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
)

// convBN is the book's conv_bn_layer without its activation: a square
// convolution with explicit zero padding, then batch norm.
type convBN struct {
	conv *layers.Conv2D
	bn   *layers.BatchNorm
}

// newConvBN builds a k×k convolution from in to out channels with the
// given stride and padding, a bias only if bias is set, then batch norm.
func newConvBN(name string, in, out, k, stride, pad int, bias bool, rng *rand.Rand, opts []layers.Option) (convBN, error) {
	if !bias {
		opts = append(opts[:len(opts):len(opts)], layers.NoBias())
	}
	attrs := ops.Conv2DAttrs{Stride: [2]int{stride, stride}, Pad: [4]int{pad, pad, pad, pad}}
	conv, err := layers.NewConv2D(name+"/conv", layers.Conv2DConfig{In: in, Out: out, KH: k, KW: k, Attrs: attrs}, rng, opts...)
	if err != nil {
		return convBN{}, err
	}
	bn, err := newBatchNorm(name+"/bn", out, opts)
	if err != nil {
		return convBN{}, err
	}
	return convBN{conv, bn}, nil
}

// newBatchNorm is the book's batch_norm: Paddle's defaults, momentum 0.9
// and epsilon 1e-5 (Keras' 0.99 lags behind the weights in a one-pass
// run: its moving statistics then cost most of the test accuracy).
func newBatchNorm(name string, channels int, opts []layers.Option) (*layers.BatchNorm, error) {
	bn, err := layers.NewBatchNorm(name, channels, opts...)
	if err != nil {
		return nil, err
	}
	bn.Attrs.Momentum, bn.Attrs.Epsilon = 0.9, 1e-5
	return bn, nil
}

func (c convBN) Forward(x *graph.Value) *graph.Value { return c.bn.Forward(c.conv.Forward(x)) }

func (c convBN) Params() []*graph.Param { return layers.Params(c.conv, c.bn) }

// basicBlock is the book's basicblock: conv3×3-BN-relu, conv3×3-BN (this
// convolution with a bias, as in the book), plus the shortcut, then relu.
// The shortcut is the input itself, or a 1×1 conv-BN projection with the
// block's stride where the channel count changes.
type basicBlock struct {
	a, b     convBN
	shortcut *convBN // nil: identity
}

func newBasicBlock(name string, in, out, stride int, rng *rand.Rand, opts []layers.Option) (*basicBlock, error) {
	a, err := newConvBN(name+"/a", in, out, 3, stride, 1, false, rng, opts)
	if err != nil {
		return nil, err
	}
	b, err := newConvBN(name+"/b", out, out, 3, 1, 1, true, rng, opts)
	if err != nil {
		return nil, err
	}
	blk := &basicBlock{a: a, b: b}
	if in != out {
		s, err := newConvBN(name+"/shortcut", in, out, 1, stride, 0, false, rng, opts)
		if err != nil {
			return nil, err
		}
		blk.shortcut = &s
	}
	return blk, nil
}

func (blk *basicBlock) Forward(x *graph.Value) *graph.Value {
	y := blk.b.Forward(graph.Relu(blk.a.Forward(x)))
	short := x
	if blk.shortcut != nil {
		short = blk.shortcut.Forward(x)
	}
	return graph.Relu(graph.Add(y, short))
}

func (blk *basicBlock) Params() []*graph.Param { return layers.Params(blk.a, blk.b, blk.shortcut) }

// NewResNet returns the book's resnet_cifar10 (He et al. 2016, section 4.2):
// a 3×3 conv-BN-relu stem with width channels, three stages of (depth-2)/6
// basic blocks with width, 2·width and 4·width channels and strides 1, 2,
// 2, global average pooling and a fully connected layer to classes logits
// (the softmax lives in the loss). Depth 32 and width 16 are the book's
// model; depth must be 6n+2 (20, 32, 44, 56, 110, ...). Every padding is
// explicit and symmetric (one pixel for 3×3), as Paddle's, so stride-2
// layers see the same windows as there. Kernels are Glorot-uniform
// (Keras' default, and Paddle's for fc; Paddle's conv2d draws N(0,
// 2/fan_in), which trained worse here); batch norm has the book's
// (Paddle's) momentum 0.9 and epsilon 1e-5.
func NewResNet(s Sizes, rng *rand.Rand, opts ...layers.Option) (*Net, error) {
	depth, width, classes := s.Depth, s.Width, s.Classes
	if depth < 8 || (depth-2)%6 != 0 || width < 1 || classes < 1 {
		return nil, fmt.Errorf("cifar: resnet depth %d, width %d, classes %d: want depth 6n+2 with n >= 1 (20, 32, 44, 56, 110), width and classes >= 1",
			depth, width, classes)
	}
	n := (depth - 2) / 6
	stem, err := newConvBN("stem", 3, width, 3, 1, 1, false, rng, opts)
	if err != nil {
		return nil, err
	}
	net := layers.Sequential{stem, layers.Activation(graph.Relu)}
	in := width
	for s, stride := range []int{1, 2, 2} {
		out := width << s
		for i := range n {
			st := 1
			if i == 0 {
				st = stride
			}
			blk, err := newBasicBlock(fmt.Sprintf("stage%d/block%d", s+1, i+1), in, out, st, rng, opts)
			if err != nil {
				return nil, err
			}
			net = append(net, blk)
			in = out
		}
	}
	fc, err := layers.NewLinear("fc", in, classes, rng, opts...)
	if err != nil {
		return nil, err
	}
	return newNet(append(net, layers.Activation(graph.GlobalAvgPool2D), fc), 3)
}
