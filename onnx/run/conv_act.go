package run

import (
	"errors"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// convSpec is what a plan needs of a Conv node to fuse an activation
// into it: its attributes and its constant filter [O, C/group, KH, KW].
type convSpec struct {
	attrs ops.Conv2DAttrs
	w     *tensor.Tensor
}

// actSpec marks a node an activation after a convolution may be made of:
// "clip" (Clip with constant bounds lo and hi other than a ReLU's),
// "sigmoid" and "mul" (SiLU, x·sigmoid(x), which exporters write as
// Sigmoid and Mul).
type actSpec struct {
	kind   string
	lo, hi float64
}

// convActOp is a 2-D convolution (with its bias) followed by the
// activation exporters write as nodes of their own after it, Clip
// (MobileNetV2's ReLU6) or SiLU (EfficientNet's x·sigmoid(x)), applied in
// place to each chunk of the output as soon as the product has written
// it, as ONNX Runtime's FusedConv does for Conv followed by Clip, Relu,
// Sigmoid or HardSigmoid (onnxruntime/core/optimizer/
// conv_activation_fusion.cc). The plan then writes and reads the
// activation's input once instead of three times, and keeps no slot for
// it. The activation's arithmetic is the unfused nodes' (vec.Clamp; vec.
// Sigmoid then a product), so the outputs are theirs bit for bit. The
// convolution's filter is packed once (ops.PackConvWeights), as the
// plan's own pass packs the convolutions it sees.
type convActOp struct {
	attrs  ops.Conv2DAttrs
	packed *ops.PackedConvWeights
	act    actSpec
}

// newConvAct returns the fused op of the convolution c and activation a.
func newConvAct(c *convSpec, a actSpec) *convActOp {
	p, _ := ops.PackConvWeights(c.w, c.attrs) // nil: the op runs unpacked, and reports a bad filter itself
	return &convActOp{attrs: c.attrs, packed: p, act: a}
}

func (o *convActOp) Name() string { return "conv2d+" + o.act.kind }

func (o *convActOp) conv() ops.Op { return ops.Conv2DPackedOp(o.attrs, o.packed) }

func (o *convActOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	y, err := ops.Run(o.conv(), in...)
	if err != nil {
		return nil, err
	}
	return y, o.apply(y)
}

func (o *convActOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New(o.Name() + ": an inference plan's op has no gradient")
}

// ForwardInto is the op's ops.Into: the convolution's, then the
// activation over out in place.
func (o *convActOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	into, ok := o.conv().(ops.Into)
	if !ok {
		return ops.Errorf(o.Name(), in, "conv2d has no ForwardInto")
	}
	if err := into.ForwardInto(out, in); err != nil {
		return err
	}
	return o.apply(out)
}

func (o *convActOp) apply(y *tensor.Tensor) error {
	switch y.DType() {
	case tensor.Float32:
		actInPlace(y.Float32s(), o.act)
	case tensor.Float64:
		actInPlace(y.Float64s(), o.act)
	default:
		return ops.Errorf(o.Name(), []*tensor.Tensor{y}, "want a float32 or float64 output")
	}
	return nil
}

// actInPlace applies a to y in chunks over the cores.
func actInPlace[T float32 | float64](y []T, a actSpec) {
	par.Elements(len(y), func(lo, hi int) {
		c := y[lo:hi]
		switch a.kind {
		case "clip":
			vec.Clamp(c, c, T(a.lo), T(a.hi))
		case "silu":
			siluInPlace(c)
		}
	})
}

// siluInPlace sets each x of y to x·sigmoid(x), through a small buffer of
// sigmoids (vec.Sigmoid, the sigmoid op's loop).
func siluInPlace[T float32 | float64](y []T) {
	var buf [256]T
	for len(y) > 0 {
		n := min(len(y), len(buf))
		s := buf[:n]
		vec.Sigmoid(s, y[:n])
		for i, v := range s {
			y[i] *= v
		}
		y = y[n:]
	}
}

// fuseConvAct looks for the activation after step i of a graph compiled
// for a plan, when step i is a convolution with a constant filter: a Clip
// that alone reads its output, or a Sigmoid and a Mul of the output by
// that sigmoid that alone read it. It returns the activation, the step
// whose output the fused op makes, and the steps it replaces.
func fuseConvAct(fm *Model, i int, readers [][]int) (a actSpec, last int, dead []int, ok bool) {
	st := fm.steps[i]
	if st.conv == nil || len(st.out) != 1 || st.out[0] < 0 || fm.isOutput(st.out[0]) {
		return actSpec{}, 0, nil, false
	}
	out := st.out[0]
	r := readers[out]
	kind := func(j int) string {
		if fm.steps[j].act == nil {
			return ""
		}
		return fm.steps[j].act.kind
	}
	switch {
	case len(r) == 1 && kind(r[0]) == "clip":
		return *fm.steps[r[0]].act, r[0], r, true
	case len(r) == 2:
		j, k := r[0], r[1]
		if kind(j) != "sigmoid" {
			j, k = k, j
		}
		if kind(j) != "sigmoid" || kind(k) != "mul" || len(fm.steps[k].in) != 2 {
			break
		}
		sig := fm.steps[j].out[0]
		in := fm.steps[k].in
		if sig < 0 || fm.isOutput(sig) || len(readers[sig]) != 1 || !(in[0] == out && in[1] == sig || in[0] == sig && in[1] == out) {
			break
		}
		return actSpec{kind: "silu"}, k, []int{j, k}, true
	}
	return actSpec{}, 0, nil, false
}
