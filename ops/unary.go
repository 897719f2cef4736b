package ops

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// Elementwise unary ops: math functions and activations. Like the binary
// ops they share one kernel and differ only in a scalar function f(x, p) and
// its derivative d(x, y, p) = ∂y/∂x given y = f(x, p); p holds the op's
// scalar attributes (leaky relu's alpha, clip's bounds). At a kink the
// derivative is TF's choice, noted per entry.
type unaryFn struct {
	f func(x float64, p [2]float64) float64
	d func(x, y float64, p [2]float64) float64
}

const sqrt2OverPi = 0.7978845608028654 // sqrt(2/pi), for gelu's tanh form

var unaryFns = map[string]unaryFn{
	"neg":    {func(x float64, _ [2]float64) float64 { return -x }, func(x, y float64, _ [2]float64) float64 { return -1 }},
	"exp":    {func(x float64, _ [2]float64) float64 { return math.Exp(x) }, func(x, y float64, _ [2]float64) float64 { return y }},
	"log":    {func(x float64, _ [2]float64) float64 { return math.Log(x) }, func(x, y float64, _ [2]float64) float64 { return 1 / x }},
	"sqrt":   {func(x float64, _ [2]float64) float64 { return math.Sqrt(x) }, func(x, y float64, _ [2]float64) float64 { return 0.5 / y }},
	"rsqrt":  {func(x float64, _ [2]float64) float64 { return 1 / math.Sqrt(x) }, func(x, y float64, _ [2]float64) float64 { return -0.5 * y / x }},
	"square": {func(x float64, _ [2]float64) float64 { return x * x }, func(x, y float64, _ [2]float64) float64 { return 2 * x }},
	// abs: derivative sign(x), 0 at 0 (TF).
	"abs": {func(x float64, _ [2]float64) float64 { return math.Abs(x) }, func(x, y float64, _ [2]float64) float64 { return sign(x) }},
	// clip(x, lo, hi): gradient 1 inside [lo, hi], 0 outside (TF's clip_by_value).
	"clip": {
		func(x float64, p [2]float64) float64 { return math.Min(math.Max(x, p[0]), p[1]) },
		func(x, y float64, p [2]float64) float64 { return b2f(x >= p[0] && x <= p[1]) },
	},
	// relu: gradient 0 at 0 (TF).
	"relu": {func(x float64, _ [2]float64) float64 { return math.Max(x, 0) }, func(x, y float64, _ [2]float64) float64 { return b2f(x > 0) }},
	// relu6 = min(max(x, 0), 6): gradient 1 on (0, 6) (TF).
	"relu6": {func(x float64, _ [2]float64) float64 { return math.Min(math.Max(x, 0), 6) }, func(x, y float64, _ [2]float64) float64 { return b2f(x > 0 && x < 6) }},
	// leaky_relu(x, alpha) = x if x > 0 else alpha*x (tf.nn.leaky_relu).
	"leaky_relu": {
		func(x float64, p [2]float64) float64 { return leaky(x, p[0]) },
		func(x, y float64, p [2]float64) float64 {
			if x > 0 {
				return 1
			}
			return p[0]
		},
	},
	// elu(x, alpha) = x if x > 0 else alpha*(exp(x)-1) (tf.nn.elu with alpha 1).
	"elu": {
		func(x float64, p [2]float64) float64 {
			if x > 0 {
				return x
			}
			return p[0] * math.Expm1(x)
		},
		func(x, y float64, p [2]float64) float64 {
			if x > 0 {
				return 1
			}
			return y + p[0]
		},
	},
	// gelu exact: x*Φ(x) (Hendrycks & Gimpel; tf.nn.gelu approximate=False).
	"gelu": {
		func(x float64, _ [2]float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) },
		func(x, y float64, _ [2]float64) float64 {
			return 0.5*(1+math.Erf(x/math.Sqrt2)) + x*math.Exp(-0.5*x*x)/math.Sqrt(2*math.Pi)
		},
	},
	// gelu_tanh: 0.5x(1+tanh(sqrt(2/π)(x+0.044715x³))) (tf.nn.gelu approximate=True).
	"gelu_tanh": {
		func(x float64, _ [2]float64) float64 {
			return 0.5 * x * (1 + math.Tanh(sqrt2OverPi*(x+0.044715*x*x*x)))
		},
		func(x, y float64, _ [2]float64) float64 {
			t := math.Tanh(sqrt2OverPi * (x + 0.044715*x*x*x))
			return 0.5*(1+t) + 0.5*x*(1-t*t)*sqrt2OverPi*(1+3*0.044715*x*x)
		},
	},
	"sigmoid": {func(x float64, _ [2]float64) float64 { return sigmoid(x) }, func(x, y float64, _ [2]float64) float64 { return y * (1 - y) }},
	"tanh":    {func(x float64, _ [2]float64) float64 { return math.Tanh(x) }, func(x, y float64, _ [2]float64) float64 { return 1 - y*y }},
	// softplus = log(1+exp(x)), computed as max(x,0)+log1p(exp(-|x|)) to avoid overflow.
	"softplus": {
		func(x float64, _ [2]float64) float64 { return softplus(x) },
		func(x, y float64, _ [2]float64) float64 { return sigmoid(x) },
	},
	// swish (SiLU) = x*sigmoid(x) (tf.nn.silu).
	"swish": {
		func(x float64, _ [2]float64) float64 { return x * sigmoid(x) },
		func(x, y float64, _ [2]float64) float64 { s := sigmoid(x); return s + x*s*(1-s) },
	},
	// erf, the Gauss error function (tf.math.erf, ONNX Erf); its derivative
	// is 2/√π·exp(-x²).
	"erf": {
		func(x float64, _ [2]float64) float64 { return math.Erf(x) },
		func(x, y float64, _ [2]float64) float64 { return 2 / math.SqrtPi * math.Exp(-x*x) },
	},
	// selu(x) = λx if x > 0 else λα(exp(x)-1), with the fixed λ and α of
	// Klambauer et al. 2017 (tf.nn.selu; ONNX Selu's defaults). The
	// derivative is λ where y >= 0 and y+λα below, as TF's SeluGrad takes it
	// from the output, so λ at 0.
	"selu": {
		func(x float64, _ [2]float64) float64 {
			if x > 0 {
				return seluScale * x
			}
			return seluScale * seluAlpha * math.Expm1(x)
		},
		func(x, y float64, _ [2]float64) float64 {
			if y < 0 {
				return y + seluScale*seluAlpha
			}
			return seluScale
		},
	},
	// mish(x) = x·tanh(softplus(x)) (Misra 2019; tfa.activations.mish);
	// with t = tanh(softplus(x)) the derivative is t + x·(1-t²)·sigmoid(x).
	"mish": {
		func(x float64, _ [2]float64) float64 { return x * math.Tanh(softplus(x)) },
		func(x, y float64, _ [2]float64) float64 {
			t := math.Tanh(softplus(x))
			return t + x*(1-t*t)*sigmoid(x)
		},
	},
	// hard_swish(x) = x·relu6(x+3)/6 (Howard et al. 2019, MobileNetV3;
	// ONNX HardSwish; Keras hard_swish). The derivative is the product rule
	// with relu6's: relu6(x+3)/6 + x/6 on (-3, 3), so 0 at -3 and 1 at 3, as
	// TF differentiates that composition.
	"hard_swish": {
		func(x float64, _ [2]float64) float64 { return x * math.Min(math.Max(x+3, 0), 6) / 6 },
		func(x, y float64, _ [2]float64) float64 {
			return math.Min(math.Max(x+3, 0), 6)/6 + x*b2f(x > -3 && x < 3)/6
		},
	},
}

// selu's constants λ (scale) and α, as tf.nn.selu and ONNX Selu define them.
const (
	seluScale = 1.0507009873554804934193349852946
	seluAlpha = 1.6732632423543772848170429916717
)

// unaryFallback are the table's ops with no CUDA kernel yet: on a device
// they run their CPU kernel on host copies (DeviceFallback).
var unaryFallback = map[string]bool{"erf": true, "selu": true, "mish": true, "hard_swish": true}

// softplus is log(1+exp(x)), computed as max(x,0)+log1p(exp(-|x|)) so that
// large |x| neither overflows nor loses the small term.
func softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func leaky(x, alpha float64) float64 {
	if x > 0 {
		return x
	}
	return alpha * x
}

// sigmoid is 1/(1+exp(-x)), written to avoid overflow for large |x|
// (vec.Sigmoid64).
func sigmoid(x float64) float64 { return vec.Sigmoid64(x) }

func init() {
	for name := range unaryFns {
		cuda := DeviceKernel
		if unaryFallback[name] {
			cuda = DeviceFallback
		}
		register(Spec{Name: name, Inputs: []string{"x"}, Grads: []int{0},
			Make: MakeOp(func(a UnaryAttrs) Op { return newUnary(name, a) }), CUDA: cuda})
	}
}

// UnaryAttrs are the elementwise ops' attributes: leaky_relu's and elu's
// alpha, clip's bounds, and gelu's approximate (tf.nn.gelu's: the tanh
// form, the op gelu_tanh); the other ops have none.
type UnaryAttrs struct {
	Alpha       float64 `json:"alpha"`
	Lo          float64 `json:"lo"`
	Hi          float64 `json:"hi"`
	Approximate bool    `json:"approximate"`
}

// newUnary builds the elementwise op name from its attributes: gelu with
// Approximate is gelu_tanh, as tf.nn.gelu(x, approximate=True).
func newUnary(name string, a UnaryAttrs) Op {
	if name == "gelu" && a.Approximate {
		name = "gelu_tanh"
	}
	return UnaryOp(name, a.Params(name)...)
}

// Params returns the scalar attributes of the elementwise op name, in the
// order UnaryOp takes them.
func (a UnaryAttrs) Params(name string) []float64 {
	switch name {
	case "clip":
		return []float64{a.Lo, a.Hi}
	case "leaky_relu", "elu":
		return []float64{a.Alpha}
	}
	return nil
}

// Attrs returns the op's UnaryAttrs (Attributed); gelu_tanh's are gelu's
// with Approximate, which builds gelu_tanh under either name.
func (o *unaryOp) Attrs() any {
	switch o.name {
	case "clip":
		return UnaryAttrs{Lo: o.p[0], Hi: o.p[1]}
	case "leaky_relu", "elu":
		return UnaryAttrs{Alpha: o.p[0]}
	case "gelu_tanh":
		return UnaryAttrs{Approximate: true}
	}
	return UnaryAttrs{}
}

type unaryOp struct {
	name string
	fn   unaryFn
	p    [2]float64
}

// UnaryOp returns the elementwise op name with scalar attributes p (alpha
// for leaky_relu and elu, lo and hi for clip); for an unknown name, an op
// whose Forward returns an error naming it.
func UnaryOp(name string, p ...float64) Op {
	fn, ok := unaryFns[name]
	if !ok {
		return unknownOp{name, fmt.Errorf("ops: no unary op %q", name)}
	}
	o := &unaryOp{name: name, fn: fn}
	copy(o.p[:], p)
	return o
}

// Neg returns -x.
func Neg(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("neg"), x) }

// Exp returns e**x.
func Exp(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("exp"), x) }

// Log returns the natural logarithm.
func Log(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("log"), x) }

// Sqrt returns the square root.
func Sqrt(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("sqrt"), x) }

// Rsqrt returns 1/sqrt(x).
func Rsqrt(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("rsqrt"), x) }

// Abs returns |x|.
func Abs(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("abs"), x) }

// Square returns x*x.
func Square(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("square"), x) }

// Clip limits x to [lo, hi].
func Clip(x *tensor.Tensor, lo, hi float64) (*tensor.Tensor, error) {
	if lo > hi {
		return nil, Errorf("clip", []*tensor.Tensor{x}, "lo %v > hi %v", lo, hi)
	}
	return run(UnaryOp("clip", lo, hi), x)
}

// Relu returns max(x, 0).
func Relu(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("relu"), x) }

// Relu6 returns min(max(x, 0), 6).
func Relu6(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("relu6"), x) }

// LeakyRelu returns x where x > 0 and alpha*x elsewhere (TF's default alpha is 0.2).
func LeakyRelu(x *tensor.Tensor, alpha float64) (*tensor.Tensor, error) {
	return run(UnaryOp("leaky_relu", alpha), x)
}

// Elu returns x where x > 0 and alpha*(exp(x)-1) elsewhere.
func Elu(x *tensor.Tensor, alpha float64) (*tensor.Tensor, error) {
	return run(UnaryOp("elu", alpha), x)
}

// Gelu returns the exact GELU x*Φ(x).
func Gelu(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("gelu"), x) }

// GeluTanh returns GELU's tanh approximation.
func GeluTanh(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("gelu_tanh"), x) }

// Sigmoid returns 1/(1+exp(-x)).
func Sigmoid(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("sigmoid"), x) }

// Tanh returns the hyperbolic tangent.
func Tanh(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("tanh"), x) }

// Softplus returns log(1+exp(x)).
func Softplus(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("softplus"), x) }

// Swish returns x*sigmoid(x) (SiLU).
func Swish(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("swish"), x) }

// Erf returns the Gauss error function.
func Erf(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("erf"), x) }

// Selu returns λx where x > 0 and λα(exp(x)-1) elsewhere, with tf.nn.selu's
// fixed λ and α.
func Selu(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("selu"), x) }

// Mish returns x*tanh(softplus(x)).
func Mish(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("mish"), x) }

// HardSwish returns x*relu6(x+3)/6.
func HardSwish(x *tensor.Tensor) (*tensor.Tensor, error) { return run(UnaryOp("hard_swish"), x) }

func (o *unaryOp) Name() string { return o.name }

// Check is the elementwise ops' device-free check (Checker).
func (o *unaryOp) Check(in []*tensor.Tensor) error {
	_, err := checkShapes(o.name, in, 1)
	return err
}

func (o *unaryOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat(o.name, in, 1)
	if err != nil {
		return nil, err
	}
	out := tensor.Empty(dt, in[0].Shape()...) // unaryKernel writes every element
	o.into(out, in)
	return out, nil
}

// into runs the kernel on validated inputs into out.
func (o *unaryOp) into(out *tensor.Tensor, in []*tensor.Tensor) {
	switch out.DType() {
	case tensor.Float32:
		unaryKernel(o, in[0].Float32s(), out.Float32s())
	case tensor.Float64:
		unaryKernel(o, in[0].Float64s(), out.Float64s())
	}
}

// unaryKernel writes y = f(x). relu, the activation between most layers,
// runs as vec.Relu (AVX on amd64) instead of through the scalar function;
// float32 sigmoid and tanh run in float32 through the vector exponential
// (vec.Sigmoid, vec.Tanh) instead of float64 math.Exp and math.Tanh.
// float32 gelu (exact) and erf run in float32 through vec.Gelu and vec.Erf
// (a fitted erfc with an exactly split exp(-z²), AVX2 on amd64) instead of
// float64 math.Erf.
// The elements run in chunks over the cores (par.Elements).
func unaryKernel[T tensor.Float](o *unaryOp, x, y []T) {
	par.ElementsOf(len(y), unaryJob[T]{o, x, y})
}

// unaryJob is unaryKernel's loop body.
type unaryJob[T tensor.Float] struct {
	o    *unaryOp
	x, y []T
}

func (j *unaryJob[T]) Range(_, lo, hi int) { unaryChunk(j.o, j.x[lo:hi], j.y[lo:hi]) }

func unaryChunk[T tensor.Float](o *unaryOp, x, y []T) {
	if o.name == "relu" {
		vec.Relu(y, x)
		return
	}
	if x32, ok := any(x).([]float32); ok && (o.name == "sigmoid" || o.name == "tanh") {
		if o.name == "sigmoid" {
			vec.Sigmoid(any(y).([]float32), x32)
		} else {
			vec.Tanh(any(y).([]float32), x32)
		}
		return
	}
	if x32, ok := any(x).([]float32); ok && (o.name == "gelu" || o.name == "erf") {
		if o.name == "gelu" {
			vec.Gelu(any(y).([]float32), x32)
		} else {
			vec.Erf(any(y).([]float32), x32)
		}
		return
	}
	for i, v := range x {
		y[i] = T(o.fn.f(float64(v), o.p))
	}
}

func (o *unaryOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g := tensor.Empty(out.DType(), out.Shape()...) // unaryGradKernel writes every element
	switch out.DType() {
	case tensor.Float32:
		unaryGradKernel(o, in[0].Float32s(), out.Float32s(), gout.Float32s(), g.Float32s())
	case tensor.Float64:
		unaryGradKernel(o, in[0].Float64s(), out.Float64s(), gout.Float64s(), g.Float64s())
	}
	return []*tensor.Tensor{g}, nil
}

// unaryGradKernel writes g = gout·d(x, y); relu's is vec.ReluGrad, which
// selects gout where x > 0 as TF's ReluGrad does;
// sigmoid's y(1-y) and tanh's 1-y² are taken from y in T without the
// scalar function call.
func unaryGradKernel[T tensor.Float](o *unaryOp, x, y, gout, g []T) {
	par.Elements(len(g), func(lo, hi int) { unaryGradChunk(o, x[lo:hi], y[lo:hi], gout[lo:hi], g[lo:hi]) })
}

func unaryGradChunk[T tensor.Float](o *unaryOp, x, y, gout, g []T) {
	switch o.name {
	case "relu":
		vec.ReluGrad(g, gout, x)
		return
	case "sigmoid":
		for i, v := range y[:len(g)] {
			g[i] = gout[i] * v * (1 - v)
		}
		return
	case "tanh":
		for i, v := range y[:len(g)] {
			g[i] = gout[i] * (1 - v*v)
		}
		return
	}
	for i := range x {
		g[i] = gout[i] * T(o.fn.d(float64(x[i]), float64(y[i]), o.p))
	}
}
