package graph

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
)

// The graph forms of ops' elementwise and matrix ops. Each records the op on
// the inputs' tape; see the ops function of the same name for semantics.

func binary(name string, a, b *Value) *Value { return apply(ops.BinaryOp(name), a, b) }

func unary(name string, x *Value, p ...float64) *Value { return apply(ops.UnaryOp(name, p...), x) }

// Add returns a + b with broadcasting.
func Add(a, b *Value) *Value { return binary("add", a, b) }

// Sub returns a - b with broadcasting.
func Sub(a, b *Value) *Value { return binary("sub", a, b) }

// Mul returns a * b elementwise with broadcasting.
func Mul(a, b *Value) *Value { return binary("mul", a, b) }

// Div returns a / b elementwise with broadcasting.
func Div(a, b *Value) *Value { return binary("div", a, b) }

// Pow returns a ** b elementwise with broadcasting.
func Pow(a, b *Value) *Value { return binary("pow", a, b) }

// Maximum returns max(a, b) elementwise with broadcasting.
func Maximum(a, b *Value) *Value { return binary("maximum", a, b) }

// Minimum returns min(a, b) elementwise with broadcasting.
func Minimum(a, b *Value) *Value { return binary("minimum", a, b) }

// Neg returns -x.
func Neg(x *Value) *Value { return unary("neg", x) }

// Exp returns e**x.
func Exp(x *Value) *Value { return unary("exp", x) }

// Log returns the natural logarithm.
func Log(x *Value) *Value { return unary("log", x) }

// Sqrt returns the square root.
func Sqrt(x *Value) *Value { return unary("sqrt", x) }

// Rsqrt returns 1/sqrt(x).
func Rsqrt(x *Value) *Value { return unary("rsqrt", x) }

// Abs returns |x|.
func Abs(x *Value) *Value { return unary("abs", x) }

// Square returns x*x.
func Square(x *Value) *Value { return unary("square", x) }

// Clip limits x to [lo, hi].
func Clip(x *Value, lo, hi float64) *Value {
	if lo > hi {
		return failed(x, &ops.Error{Op: "clip", Msg: fmt.Sprintf("lo %v > hi %v", lo, hi)})
	}
	return unary("clip", x, lo, hi)
}

// Relu returns max(x, 0).
func Relu(x *Value) *Value { return unary("relu", x) }

// Relu6 returns min(max(x, 0), 6).
func Relu6(x *Value) *Value { return unary("relu6", x) }

// LeakyRelu returns x where x > 0 and alpha*x elsewhere.
func LeakyRelu(x *Value, alpha float64) *Value { return unary("leaky_relu", x, alpha) }

// Elu returns x where x > 0 and alpha*(exp(x)-1) elsewhere.
func Elu(x *Value, alpha float64) *Value { return unary("elu", x, alpha) }

// Gelu returns the exact GELU.
func Gelu(x *Value) *Value { return unary("gelu", x) }

// GeluTanh returns GELU's tanh approximation.
func GeluTanh(x *Value) *Value { return unary("gelu_tanh", x) }

// Sigmoid returns 1/(1+exp(-x)).
func Sigmoid(x *Value) *Value { return unary("sigmoid", x) }

// Tanh returns the hyperbolic tangent.
func Tanh(x *Value) *Value { return unary("tanh", x) }

// Softplus returns log(1+exp(x)).
func Softplus(x *Value) *Value { return unary("softplus", x) }

// Swish returns x*sigmoid(x).
func Swish(x *Value) *Value { return unary("swish", x) }

// Erf returns the Gauss error function.
func Erf(x *Value) *Value { return unary("erf", x) }

// Selu returns λx where x > 0 and λα(exp(x)-1) elsewhere, with tf.nn.selu's
// fixed λ and α.
func Selu(x *Value) *Value { return unary("selu", x) }

// Mish returns x*tanh(softplus(x)).
func Mish(x *Value) *Value { return unary("mish", x) }

// HardSwish returns x*relu6(x+3)/6.
func HardSwish(x *Value) *Value { return unary("hard_swish", x) }

// HardSigmoid returns max(0, min(1, alpha*x + beta)), ONNX HardSigmoid
// (whose defaults are alpha 0.2 and beta 0.5).
func HardSigmoid(x *Value, alpha, beta float64) *Value {
	return apply(ops.HardSigmoidOp(ops.HardSigmoidAttrs{Alpha: alpha, Beta: beta}), x)
}

// PRelu returns x where x > 0 and slope*x elsewhere, slope broadcast to x's
// shape (ONNX PRelu); the slope's gradient is summed over the broadcast axes.
func PRelu(x, slope *Value) *Value { return apply(ops.PReluOp(), x, slope) }

// MatMul returns op(a)·op(b), op transposing the last two axes when set,
// with NumPy matmul semantics (ONNX MatMul): leading batch dims broadcast
// and a 1-D operand is promoted to a row (a) or column (b) whose axis the
// result drops. A broadcast operand's gradient is summed over the batch
// entries that shared it. See ops.MatMulOp.
func MatMul(a, b *Value, transA, transB bool) *Value {
	return apply(ops.MatMulOp(transA, transB), a, b)
}

// Linear returns x·W + b; b may be nil.
//
// On a tape that does not record (an inference tape), a parameter's
// weights used a second time within a step are packed for the GEMM once
// and read from the packing until Release (ops.LinearPackedOp): a
// decoder's output projection, applied at every step of a beam search,
// would pack its weights at every call otherwise. Parameters must not
// change between an inference tape's Release calls.
func Linear(x, w, b *Value) *Value {
	op := ops.LinearOp()
	if w != nil {
		if p := w.tape.packed(w); p != nil {
			op = ops.LinearPackedOp(p)
		}
	}
	if b == nil {
		return apply(op, x, w)
	}
	return apply(op, x, w, b)
}

// LinearConcat returns [a, b]·W + bias over the last axis without building
// the concatenation; bias may be nil.
func LinearConcat(a, b, w, bias *Value) *Value {
	if bias == nil {
		return apply(ops.LinearConcatOp(), a, b, w)
	}
	return apply(ops.LinearConcatOp(), a, b, w, bias)
}
