package layers

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Conv2D is a 2-D convolution over NCHW input with an OIHW kernel
// [out, in/groups, kh, kw] (initialised Glorot-uniform with Keras' fans) and
// a zero bias [out].
type Conv2D struct {
	kernelBias
	Attrs ops.Conv2DAttrs
}

// NewConv2D returns a Conv2D layer from in to out channels with a kh×kw
// kernel; attrs sets stride, dilation, padding and groups.
func NewConv2D(name string, in, out, kh, kw int, attrs ops.Conv2DAttrs, rng *rand.Rand, opts ...Option) (*Conv2D, error) {
	c := newConfig(opts)
	if err := checkConvAttrs(attrs); err != nil {
		return nil, fmt.Errorf("layers: conv2d %q: %w", name, err)
	}
	groups := max(attrs.Groups, 1)
	if in <= 0 || out <= 0 || kh <= 0 || kw <= 0 || in%groups != 0 || out%groups != 0 {
		return nil, fmt.Errorf("layers: conv2d %q: in=%d out=%d kernel %dx%d groups=%d: want positive sizes and channels divisible by groups",
			name, in, out, kh, kw, groups)
	}
	w, err := tensor.GlorotUniform(rng, c.dtype, out, in/groups, kh, kw)
	if err != nil {
		return nil, fmt.Errorf("layers: conv2d %q: %w", name, err)
	}
	return &Conv2D{newKernelBias(name, w, out, c), attrs}, nil
}

// Forward convolves x [N, in, H, W].
func (l *Conv2D) Forward(x *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("conv2d", x)
	}
	w, b := l.values(t)
	return graph.Conv2D(x, w, b, l.Attrs)
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
