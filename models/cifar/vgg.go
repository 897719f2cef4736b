package cifar

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
)

// vggGroups gives the convolutions in each of the five groups of the VGG
// variants (Simonyan & Zisserman 2015, table 1, configurations A, B, D, E).
var vggGroups = map[int][5]int{
	11: {1, 1, 2, 2, 2},
	13: {2, 2, 2, 2, 2},
	16: {2, 2, 3, 3, 3},
	19: {2, 2, 4, 4, 4},
}

// NewVGG returns the book's vgg_bn_drop: five groups of 3×3 convolutions
// (padding 1, with a bias) each followed by batch norm and relu, and by
// dropout except for the group's last convolution (rate 0.3 in the first
// group, 0.4 after), each group ending in 2×2 max pooling; then dropout
// 0.5, fc 8·width, batch norm, relu, dropout 0.5, fc 8·width (no
// activation, as in the book) and fc to classes logits. The groups have
// width, 2·width, 4·width, 8·width and 8·width channels. Depth 16 and
// width 64 are the book's model (groups of 2, 2, 3, 3, 3 convolutions:
// 64x2, 128x2, 256x3, 512x3, 512x3); depths 11, 13 and 19 take the other
// VGG configurations. Dropout is inverted (scaled at training, identity at
// inference) where Paddle's default scales at inference; the expectation
// is the same. Batch norm has the book's momentum 0.9 and epsilon 1e-5.
// rng draws the initial weights and, later, the dropout masks.
func NewVGG(s Sizes, rng *rand.Rand, opts ...layers.Option) (*Net, error) {
	depth, width, classes := s.Depth, s.Width, s.Classes
	groups, ok := vggGroups[depth]
	if !ok || width < 1 || classes < 1 {
		return nil, fmt.Errorf("cifar: vgg depth %d, width %d, classes %d: want depth 11, 13, 16 or 19, width and classes >= 1",
			depth, width, classes)
	}
	relu := layers.Activation(graph.Relu)
	pool := layers.MaxPool2D{Attrs: ops.Pool2DAttrs{Kernel: [2]int{2, 2}}}
	dropout := func(rate float64) (layers.Layer, error) { return layers.NewDropout(rate, rng) }
	var net layers.Sequential
	in := 3
	for g, convs := range groups {
		out := width << min(g, 3)
		rate := 0.4
		if g == 0 {
			rate = 0.3
		}
		for i := range convs {
			name := fmt.Sprintf("group%d/conv%d", g+1, i+1)
			conv, err := layers.NewConv2D(name, layers.Conv2DConfig{In: in, Out: out, KH: 3, KW: 3, Attrs: ops.Conv2DAttrs{Pad: [4]int{1, 1, 1, 1}}}, rng, opts...)
			if err != nil {
				return nil, err
			}
			bn, err := newBatchNorm(name+"/bn", out, opts)
			if err != nil {
				return nil, err
			}
			net = append(net, conv, bn, relu)
			if i < convs-1 {
				d, err := dropout(rate)
				if err != nil {
					return nil, err
				}
				net = append(net, d)
			}
			in = out
		}
		net = append(net, pool)
	}
	hidden := 8 * width
	fc1, err := layers.NewLinear("fc1", in, hidden, rng, opts...) // 32 / 2^5 = 1: the map is 1×1
	if err != nil {
		return nil, err
	}
	bn, err := newBatchNorm("fc1/bn", hidden, opts)
	if err != nil {
		return nil, err
	}
	fc2, err := layers.NewLinear("fc2", hidden, hidden, rng, opts...)
	if err != nil {
		return nil, err
	}
	fc3, err := layers.NewLinear("fc3", hidden, classes, rng, opts...)
	if err != nil {
		return nil, err
	}
	half, err := dropout(0.5)
	if err != nil {
		return nil, err
	}
	return newNet(append(net, layers.Flatten{}, half, fc1, bn, relu, half, fc2, fc3), 3)
}
