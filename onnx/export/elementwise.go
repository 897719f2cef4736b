package export

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Elementwise ops: each Plumb op is one ONNX node of the same formula
// (onnx/docs/Operators.md); NumPy broadcasting is ONNX's too.
func init() {
	unary := map[string]string{
		"relu": "Relu", "tanh": "Tanh", "sigmoid": "Sigmoid", "exp": "Exp", "log": "Log",
		"sqrt": "Sqrt", "abs": "Abs", "neg": "Neg", "softplus": "Softplus", "erf": "Erf",
		"selu":       "Selu",      // ONNX's default alpha and gamma are tf.nn.selu's constants
		"hard_swish": "HardSwish", // opset 14
	}
	for name, opType := range unary {
		register(name, func(e *exporter, c call) (*val, error) { return e.elementwise(c, opType) })
	}
	register("leaky_relu", func(e *exporter, c call) (*val, error) {
		return e.elementwise(c, "LeakyRelu", attrFloat("alpha", c.attrs().(ops.UnaryAttrs).Alpha))
	})
	register("elu", func(e *exporter, c call) (*val, error) {
		return e.elementwise(c, "Elu", attrFloat("alpha", c.attrs().(ops.UnaryAttrs).Alpha))
	})
	register("hard_sigmoid", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.HardSigmoidAttrs)
		return e.elementwise(c, "HardSigmoid", attrFloat("alpha", a.Alpha), attrFloat("beta", a.Beta))
	})
	register("clip", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.UnaryAttrs)
		dt := c.in[0].DType()
		return e.elementwise(c, "Clip", e.scalar(dt, a.Lo), e.scalar(dt, a.Hi))
	})
	register("relu6", func(e *exporter, c call) (*val, error) {
		dt := c.in[0].DType()
		return e.elementwise(c, "Clip", e.scalar(dt, 0), e.scalar(dt, 6))
	})
	register("square", func(e *exporter, c call) (*val, error) {
		c.vs = append(c.vs, c.vs[0])
		return e.elementwise(c, "Mul")
	})
	// Activations opset 17 has no op for, written as their formulas
	// (gelu: Hendrycks and Gimpel 2016, exact and tanh forms; swish: x·σ(x);
	// mish: x·tanh(softplus(x))).
	formulas := map[string]func(e *exporter, x string, dt tensor.DType) string{
		"gelu": func(e *exporter, x string, dt tensor.DType) string {
			erf := e.apply("Erf", []string{e.apply("Div", []string{x, e.scalar(dt, math.Sqrt2)})})
			return e.apply("Mul", []string{e.apply("Mul", []string{x, e.scalar(dt, 0.5)}), e.apply("Add", []string{erf, e.scalar(dt, 1)})})
		},
		"gelu_tanh": func(e *exporter, x string, dt tensor.DType) string {
			x3 := e.apply("Mul", []string{e.apply("Mul", []string{x, x}), x})
			in := e.apply("Mul", []string{e.apply("Add", []string{x, e.apply("Mul", []string{x3, e.scalar(dt, 0.044715)})}), e.scalar(dt, math.Sqrt(2/math.Pi))})
			return e.apply("Mul", []string{e.apply("Mul", []string{x, e.scalar(dt, 0.5)}), e.apply("Add", []string{e.apply("Tanh", []string{in}), e.scalar(dt, 1)})})
		},
		"swish": func(e *exporter, x string, _ tensor.DType) string {
			return e.apply("Mul", []string{x, e.apply("Sigmoid", []string{x})})
		},
		"mish": func(e *exporter, x string, _ tensor.DType) string {
			return e.apply("Mul", []string{x, e.apply("Tanh", []string{e.apply("Softplus", []string{x})})})
		},
	}
	for name, f := range formulas {
		register(name, func(e *exporter, c call) (*val, error) {
			v := c.vs[0]
			return &val{batch: v.batch, seq: v.seq, name: f(e, v.name, c.in[0].DType())}, nil
		})
	}
	binary := map[string]string{"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max", "minimum": "Min"}
	for name, opType := range binary {
		register(name, func(e *exporter, c call) (*val, error) { return e.elementwise(c, opType) })
	}
	register("softmax", func(e *exporter, c call) (*val, error) {
		return e.softmax(c, "Softmax", c.attrs().(ops.SoftmaxAttrs).Axis)
	})
	register("log_softmax", func(e *exporter, c call) (*val, error) {
		return e.softmax(c, "LogSoftmax", c.attrs().(ops.SoftmaxAttrs).Axis)
	})
}

// elementwise writes opType over the call's inputs (extra: further ONNX
// inputs, constants, after them; attrs its attributes) and returns the
// output's layout: the rows of the inputs' ragged batch, or a batch when
// an input has one. A constant that spans dimension 0 of a batched or
// ragged output (not 1 there) would tie the model to the example's batch,
// and is an error.
func (e *exporter) elementwise(c call, opType string, extra ...any) (*val, error) {
	out := &val{}
	rank := c.out.Rank()
	for _, v := range c.vs {
		switch {
		case v.seq != nil && out.seq != nil && v.seq != out.seq:
			return nil, fmt.Errorf("inputs are rows of two different ragged batches")
		case v.seq != nil:
			out.seq = v.seq
		case v.batch:
			out.batch = true
		}
	}
	if out.seq != nil && out.batch {
		return nil, fmt.Errorf("mixes the rows of a ragged batch with a dense batch; expected one or the other")
	}
	names := make([]string, 0, len(c.vs)+len(extra))
	for i, v := range c.vs {
		switch {
		case v.seq != nil || v.batch:
			if v.t.Rank() != rank {
				return nil, fmt.Errorf("input %d (rank %d) is broadcast over a new dimension 0 of the batch's rank-%d output; expected the batch to stay dimension 0", i, v.t.Rank(), rank)
			}
		case (out.seq != nil || out.batch) && v.t.Rank() == rank && v.t.Dim(0) != 1:
			return nil, fmt.Errorf("input %d, %v%v, a constant, spans dimension 0, the batch; expected size 1 there or a lower rank, since the exported batch size is symbolic", i, v.t.DType(), v.t.Shape())
		}
		names = append(names, v.name)
	}
	var attrs []*pb.AttributeProto
	for _, x := range extra {
		switch x := x.(type) {
		case string:
			names = append(names, x)
		case *pb.AttributeProto:
			attrs = append(attrs, x)
		}
	}
	out.name = e.apply(opType, names, attrs...)
	return out, nil
}

// axisOf maps axis of a Plumb tensor (negative counts from the end) to the
// ONNX value's: one more for a ragged batch's rows past dimension 0. The
// rows' own axis 0 (across sequences) has no padded counterpart.
func axisOf(v *val, axis, rank int) (int64, error) {
	if axis < 0 {
		axis += rank
	}
	if axis < 0 || axis >= rank {
		return 0, fmt.Errorf("axis %d is outside rank %d", axis, rank)
	}
	if v.seq == nil {
		return int64(axis), nil
	}
	if axis == 0 {
		return 0, fmt.Errorf("axis 0 of a ragged batch's rows runs across its sequences; expected an axis within a row")
	}
	return int64(axis + 1), nil
}

// softmax writes a one-axis Softmax or LogSoftmax (opset 13's form).
func (e *exporter) softmax(c call, opType string, axis int) (*val, error) {
	v := c.vs[0]
	ax, err := axisOf(v, axis, c.in[0].Rank())
	if err != nil {
		return nil, err
	}
	if v.batch && ax == 0 {
		return nil, fmt.Errorf("normalises over axis 0, the batch; expected an axis within a row")
	}
	return &val{name: e.apply(opType, []string{v.name}, attrInt("axis", ax)), batch: v.batch, seq: v.seq}, nil
}
