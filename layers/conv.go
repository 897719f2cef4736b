package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/ops"
)

// Conv2D is a 2-D convolution over NCHW input with an OIHW kernel
// [out, in/groups, kh, kw] (initialised Glorot-uniform with Keras' fans) and
// a zero bias [out].
type Conv2D struct {
	kernelBias
	Attrs ops.Conv2DAttrs
}

// Conv2DConfig shapes a Conv2D layer: In input and Out output channels, a
// KH×KW kernel, and the convolution's attributes (stride, dilation,
// padding, groups; zero values are the defaults).
type Conv2DConfig struct {
	In, Out int
	KH, KW  int
	Attrs   ops.Conv2DAttrs
}

// NewConv2D returns a Conv2D layer shaped by cfg whose parameters are named
// name/kernel and name/bias.
func NewConv2D(name string, cfg Conv2DConfig, rng *rand.Rand, opts ...Option) (*Conv2D, error) {
	c := newConfig(opts)
	if err := checkConvAttrs(cfg.Attrs); err != nil {
		return nil, fmt.Errorf("layers: conv2d %q: %w", name, err)
	}
	groups := max(cfg.Attrs.Groups, 1)
	if cfg.In <= 0 || cfg.Out <= 0 || cfg.KH <= 0 || cfg.KW <= 0 || cfg.In%groups != 0 || cfg.Out%groups != 0 {
		return nil, fmt.Errorf("layers: conv2d %q: in=%d out=%d kernel %dx%d groups=%d: want positive sizes and channels divisible by groups",
			name, cfg.In, cfg.Out, cfg.KH, cfg.KW, groups)
	}
	w, err := initializer.GlorotUniform(rng, c.dtype, cfg.Out, cfg.In/groups, cfg.KH, cfg.KW)
	if err != nil {
		return nil, fmt.Errorf("layers: conv2d %q: %w", name, err)
	}
	return &Conv2D{newKernelBias(name, w, cfg.Out, c), cfg.Attrs}, nil
}

// Forward convolves x [N, in, H, W].
func (l *Conv2D) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("conv2d", x)
	}
	w, b := l.values(t)
	return out("conv2d", l, x.Err(), graph.Conv2D(x, w, b, l.Attrs))
}

// MaxPool2D is max pooling over NCHW input.
type MaxPool2D struct{ Attrs ops.Pool2DAttrs }

// Forward pools x.
func (l MaxPool2D) Forward(x *graph.Value) *graph.Value { return graph.MaxPool2D(x, l.Attrs) }

// Params returns nothing: pooling has no parameters.
func (MaxPool2D) Params() []*graph.Param { return nil }

// AvgPool2D is average pooling over NCHW input (padding excluded from the mean).
type AvgPool2D struct{ Attrs ops.Pool2DAttrs }

// Forward pools x.
func (l AvgPool2D) Forward(x *graph.Value) *graph.Value { return graph.AvgPool2D(x, l.Attrs) }

// Params returns nothing: pooling has no parameters.
func (AvgPool2D) Params() []*graph.Param { return nil }

// Flatten reshapes [N, ...] to [N, rest], as Keras' Flatten.
type Flatten struct{}

// Forward flattens x.
func (Flatten) Forward(x *graph.Value) *graph.Value { return graph.Flatten(x) }

// Params returns nothing.
func (Flatten) Params() []*graph.Param { return nil }

// checkConvAttrs rejects negative strides, dilations, groups and padding at
// construction, naming only what is wrong: zero is valid and means the
// default (1, or no padding).
func checkConvAttrs(a ops.Conv2DAttrs) error {
	var bad []string
	for _, f := range []struct {
		name string
		v    []int
	}{{"stride", a.Stride[:]}, {"dilation", a.Dilation[:]}, {"groups", []int{a.Groups}}, {"padding", a.Pad[:]}} {
		if slices.ContainsFunc(f.v, func(v int) bool { return v < 0 }) {
			bad = append(bad, fmt.Sprintf("%s %v", f.name, f.v))
		}
	}
	if bad != nil {
		return fmt.Errorf("%s: want values >= 0 (0 means the default: 1, or no padding)", strings.Join(bad, ", "))
	}
	return nil
}
