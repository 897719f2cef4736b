package run

import (
	"errors"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// clampKernel is Clip with constant bounds on float32 and float64
// tensors: y = min(max(x, lo), hi) as ONNX Runtime's Clip computes it
// (std::min(std::max(x, lo), hi)), so NaN passes through, −0 stays −0,
// and lo > hi sets every value to hi (ONNX Operators.md, Clip-13). It runs
// vec.Clamp in x's own type (AVX for float32) rather than ops' clip, whose
// scalar path goes through float64 math.Max and math.Min per element:
// MobileNetV2 runs 35 ReLU6 clips per image.
func clampKernel(lo, hi float64) kernel {
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x := in[0]
		if x.Storage() != nil {
			return nil, ops.Errorf("clip", in, "want the input in host memory")
		}
		y := tensor.Empty(x.DType(), x.Shape()...)
		switch x.DType() {
		case tensor.Float32:
			vec.Clamp(y.Float32s(), x.Float32s(), float32(lo), float32(hi))
		case tensor.Float64:
			vec.Clamp(y.Float64s(), x.Float64s(), lo, hi)
		default:
			return nil, ops.Errorf("clip", in, "want a float32 or float64 input")
		}
		return []*tensor.Tensor{y}, nil
	}
}

// clampOp is Clip with constant bounds as an op of a plan: vec.Clamp, in
// chunks over the cores, written into the plan's arena (ops.Into). It
// is named clip and gives ops' clip attributes, whose function it computes
// (min(max(x, lo), hi)) in x's own type.
type clampOp struct{ lo, hi float64 }

// lowerClip is Clip's plan form.
func lowerClip(lo, hi float64) lowerFn { return lowerFirst(&clampOp{lo: lo, hi: hi}) }

func (o *clampOp) Name() string { return "clip" }

// Attrs returns ops' clip attributes (ops.Attributed).
func (o *clampOp) Attrs() any { return ops.UnaryAttrs{Lo: o.lo, Hi: o.hi} }

func (o *clampOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 1 || in[0] == nil {
		return nil, ops.Errorf("clip", in, "want one input")
	}
	y := tensor.Empty(in[0].DType(), in[0].Shape()...)
	return y, o.ForwardInto(y, in)
}

func (o *clampOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New("clip: an inference plan's op has no gradient")
}

// ForwardInto is the op's ops.Into.
func (o *clampOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if len(in) != 1 || in[0] == nil || in[0].Storage() != nil {
		return ops.Errorf("clip", in, "want one input in host memory")
	}
	x := in[0]
	if out == nil || out.DType() != x.DType() || !out.Shape().Equal(x.Shape()) || out.Storage() != nil {
		return ops.Errorf("clip", in, "want a host output of the input's dtype and shape")
	}
	switch x.DType() {
	case tensor.Float32:
		xs, ys, lo, hi := x.Float32s(), out.Float32s(), float32(o.lo), float32(o.hi)
		par.Elements(len(ys), func(a, b int) { vec.Clamp(ys[a:b], xs[a:b], lo, hi) })
	case tensor.Float64:
		xs, ys := x.Float64s(), out.Float64s()
		par.Elements(len(ys), func(a, b int) { vec.Clamp(ys[a:b], xs[a:b], o.lo, o.hi) })
	default:
		return ops.Errorf("clip", in, "want a float32 or float64 input")
	}
	return nil
}
