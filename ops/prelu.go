package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "prelu", Inputs: []string{"x", "slope"}, Grads: []int{0, 1},
		Make: MakeOp(func(NoAttrs) Op { return PReluOp() }), CUDA: DeviceFallback})
}

type preluOp struct{}

// PReluOp returns the op y = x where x > 0 and slope·x elsewhere, ONNX PRelu
// (opset 16) and Keras's PReLU layer (max(0, x) + slope·min(0, x)): slope
// broadcasts to x's shape (unidirectionally: the output has x's shape, and
// slope's axes align with x's trailing axes, each of size 1 or x's). The
// gradient is gout where x > 0 and gout·slope elsewhere for x, as
// leaky_relu's is, and gout·min(0, x) for slope, summed over the axes
// slope was broadcast along.
func PReluOp() Op { return preluOp{} }

// PRelu returns x where x > 0 and slope*x elsewhere; see PReluOp.
func PRelu(x, slope *tensor.Tensor) (*tensor.Tensor, error) { return run(PReluOp(), x, slope) }

func (preluOp) Name() string { return "prelu" }

func (preluOp) Attrs() any { return NoAttrs{} }

// Check validates the inputs from shapes alone: one float dtype, and a
// slope that broadcasts to x's shape.
func (preluOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("prelu", in, 2); err != nil {
		return err
	}
	x, s := in[0].Shape(), in[1].Shape()
	if len(s) > len(x) {
		return Errorf("prelu", in, "slope has %d axes, want at most x's %d", len(s), len(x))
	}
	for i, d := range s {
		if want := x[len(x)-len(s)+i]; d != want && d != 1 {
			return Errorf("prelu", in, "slope axis %d has size %d, want 1 or x's %d (slope broadcasts to x's shape %v)", i, d, want, x)
		}
	}
	return nil
}

func (o preluOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := o.Check(in); err != nil {
		return nil, err
	}
	if _, err := checkFloat("prelu", in, 2); err != nil {
		return nil, err
	}
	x, s := in[0], in[1]
	out := tensor.Empty(x.DType(), x.Shape()...) // preluKernel writes every element
	st := [][]int{bcastStrides(s.Shape(), x.Shape())}
	switch x.DType() {
	case tensor.Float32:
		preluKernel(x.Float32s(), s.Float32s(), out.Float32s(), x.Shape(), st)
	case tensor.Float64:
		preluKernel(x.Float64s(), s.Float64s(), out.Float64s(), x.Shape(), st)
	}
	return out, nil
}

// preluKernel writes y = x where x > 0 and slope·x elsewhere, reading slope
// through its broadcast strides st.
func preluKernel[T tensor.Float](x, slope, y []T, shape tensor.Shape, st [][]int) {
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		p, s := offs[0], step[0]
		for i := range n {
			v := x[o+i]
			if v <= 0 {
				v *= slope[p+i*s]
			}
			y[o+i] = v
		}
	})
}

func (preluOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	x, s := in[0], in[1]
	shape := x.Shape()
	st := [][]int{bcastStrides(s.Shape(), shape)}
	grads := make([]*tensor.Tensor, 2)
	var gx, gs *tensor.Tensor
	if need[0] {
		gx = tensor.Empty(x.DType(), shape...) // preluGradKernel writes every element
	}
	if need[1] {
		gs = tensor.Empty(x.DType(), shape...) // preluGradKernel writes every element
	}
	switch x.DType() {
	case tensor.Float32:
		preluGradKernel(x.Float32s(), s.Float32s(), gout.Float32s(), float32s(gx), float32s(gs), shape, st)
	case tensor.Float64:
		preluGradKernel(x.Float64s(), s.Float64s(), gout.Float64s(), float64s(gx), float64s(gs), shape, st)
	}
	grads[0] = gx
	if gs != nil {
		grads[1] = sumTo(gs, s.Shape())
	}
	return grads, nil
}

// preluGradKernel writes, over x's shape, gx = gout where x > 0 and
// gout·slope elsewhere, and gs = gout·min(0, x) (summed to slope's shape by
// the caller); a nil gx or gs is not wanted.
func preluGradKernel[T tensor.Float](x, slope, gout, gx, gs []T, shape tensor.Shape, st [][]int) {
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		p, s := offs[0], step[0]
		for i := range n {
			v, g := x[o+i], gout[o+i]
			pos := v > 0
			if gx != nil {
				if pos {
					gx[o+i] = g
				} else {
					gx[o+i] = g * slope[p+i*s]
				}
			}
			if gs != nil {
				if pos {
					gs[o+i] = 0
				} else {
					gs[o+i] = g * v
				}
			}
		}
	})
}

func float32s(t *tensor.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

func float64s(t *tensor.Tensor) []float64 {
	if t == nil {
		return nil
	}
	return t.Float64s()
}
