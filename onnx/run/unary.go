package run

import (
	"math"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The float elementwise ops that map one to one onto a unary op of
// package ops (ONNX Operators.md: Relu, Sigmoid, Tanh, Exp, Log, Sqrt,
// Erf, Softplus, Mish, HardSwish; Abs and Neg also take int tensors).
var unaryOps = map[string]string{
	"Relu":      "relu",
	"Sigmoid":   "sigmoid",
	"Tanh":      "tanh",
	"Exp":       "exp",
	"Log":       "log",
	"Sqrt":      "sqrt",
	"Erf":       "erf",
	"Softplus":  "softplus",
	"Mish":      "mish",
	"HardSwish": "hard_swish",
	"Abs":       "abs",
	"Neg":       "neg",
}

func init() {
	for onnxName, name := range unaryOps {
		minOpset := int64(0)
		if onnxName == "Mish" {
			minOpset = 18
		}
		if onnxName == "HardSwish" {
			minOpset = 14
		}
		register(onnxName, opDef{minOpset: minOpset, compile: func(c *ctx) (kernel, error) {
			if err := c.unaryHead(); err != nil {
				return nil, err
			}
			if isIntElem(c.in[0].elem) && (name == "abs" || name == "neg") {
				return intUnary(name), nil
			}
			if err := c.float(0); err != nil {
				return nil, err
			}
			c.lower = lowerOp(ops.UnaryOp(name))
			if name == "sigmoid" {
				c.act = &actSpec{kind: "sigmoid"}
			}
			return unaryKernel(name), nil
		}})
	}
	register("Elu", opDef{compile: alphaUnary("elu", 1)})
	register("LeakyRelu", opDef{compile: alphaUnary("leaky_relu", 0.01)})
	register("Selu", opDef{compile: compileSelu})
	register("HardSigmoid", opDef{compile: compileHardSigmoid})
	register("Gelu", opDef{minOpset: 20, compile: compileGelu})
	register("Reciprocal", opDef{compile: compileReciprocal})
}

// unaryHead checks one input, one output, a known element type passed
// through, and no attributes beyond those the caller allowed; it copies the
// input's shape to the output.
func (c *ctx) unaryHead(attrs ...string) error {
	if err := c.arity(1, 1, 1); err != nil {
		return err
	}
	if err := c.n.allow(attrs...); err != nil {
		return err
	}
	c.out[0] = info{elem: c.in[0].elem, shape: c.in[0].shape}
	return nil
}

func unaryKernel(name string, p ...float64) kernel {
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := ops.Run(ops.UnaryOp(name, p...), in[0])
		return []*tensor.Tensor{y}, err
	}
}

func intUnary(name string) kernel {
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x := in[0]
		y := newTensor(x.DType(), []int(x.Shape()))
		for i := range x.Size() {
			v := intAt(x, i)
			if name == "neg" || (name == "abs" && v < 0) {
				v = -v
			}
			setInt(y, i, v)
		}
		return []*tensor.Tensor{y}, nil
	}
}

// alphaUnary compiles Elu and LeakyRelu, whose one attribute alpha maps
// onto the ops' alpha.
func alphaUnary(name string, def float32) func(*ctx) (kernel, error) {
	return func(c *ctx) (kernel, error) {
		if err := c.unaryHead("alpha"); err != nil {
			return nil, err
		}
		if err := c.float(0); err != nil {
			return nil, err
		}
		alpha, err := c.n.floatAttr("alpha", def)
		if err != nil {
			return nil, err
		}
		c.lower = lowerOp(ops.UnaryOp(name, float64(alpha)))
		return unaryKernel(name, float64(alpha)), nil
	}
}

// ONNX Selu's defaults, which ops' selu has built in (Klambauer et al.
// 2017).
const (
	seluAlpha = 1.67326319217681884765625
	seluGamma = 1.05070102214813232421875
)

func compileSelu(c *ctx) (kernel, error) {
	if err := c.unaryHead("alpha", "gamma"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	alpha, err := c.n.floatAttr("alpha", seluAlpha)
	if err != nil {
		return nil, err
	}
	gamma, err := c.n.floatAttr("gamma", seluGamma)
	if err != nil {
		return nil, err
	}
	if alpha != float32(seluAlpha) || gamma != float32(seluGamma) {
		return nil, c.n.errorf("alpha %v and gamma %v are not supported; expected the defaults alpha %v and gamma %v", alpha, gamma, float32(seluAlpha), float32(seluGamma))
	}
	return unaryKernel("selu"), nil
}

func compileHardSigmoid(c *ctx) (kernel, error) {
	if err := c.unaryHead("alpha", "beta"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	alpha, err := c.n.floatAttr("alpha", 0.2)
	if err != nil {
		return nil, err
	}
	beta, err := c.n.floatAttr("beta", 0.5)
	if err != nil {
		return nil, err
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := ops.HardSigmoid(in[0], float64(alpha), float64(beta))
		return []*tensor.Tensor{y}, err
	}, nil
}

// compileGelu maps Gelu (opset 20) onto gelu, or gelu_tanh for
// approximate "tanh".
func compileGelu(c *ctx) (kernel, error) {
	if err := c.unaryHead("approximate"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	approx, err := c.n.stringAttr("approximate", "none")
	if err != nil {
		return nil, err
	}
	switch approx {
	case "none":
		c.lower = lowerOp(ops.UnaryOp("gelu"))
		return unaryKernel("gelu"), nil
	case "tanh":
		c.lower = lowerOp(ops.UnaryOp("gelu_tanh"))
		return unaryKernel("gelu_tanh"), nil
	}
	return nil, c.n.errorf("approximate %q is not supported; expected \"none\" or \"tanh\"", approx)
}

// compileReciprocal is 1/x, as div of a scalar one by x.
func compileReciprocal(c *ctx) (kernel, error) {
	if err := c.unaryHead(); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		one, err := tensor.Full(in[0].DType(), 1)
		if err != nil {
			return nil, err
		}
		y, err := ops.Div(one, in[0])
		return []*tensor.Tensor{y}, err
	}, nil
}

// clipBounds reads Clip's optional min and max (inputs from opset 11),
// which must be constants; an absent one is unbounded.
func clipBounds(c *ctx) (lo, hi float64, err error) {
	lo, hi = math.Inf(-1), math.Inf(1)
	for i, p := range []*float64{&lo, &hi} {
		if !c.has(i + 1) {
			continue
		}
		t := c.in[i+1].konst
		if t == nil || t.Size() != 1 {
			return 0, 0, c.n.errorf("input %d %q is not a constant scalar; expected a constant min and max", i+1, c.n.Inputs[i+1])
		}
		*p = t.At(0)
	}
	return lo, hi, nil
}

func init() {
	register("Clip", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(1, 3, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow(); err != nil {
			return nil, err
		}
		if err := c.float(0); err != nil {
			return nil, err
		}
		c.out[0] = info{elem: c.in[0].elem, shape: c.in[0].shape}
		lo, hi, err := clipBounds(c)
		if err != nil {
			return nil, err
		}
		if lo == 0 && math.IsInf(hi, 1) {
			c.lower = lowerFirst(ops.UnaryOp("relu"))
			return unaryKernel("relu"), nil
		}
		c.lower = lowerClip(lo, hi)
		c.act = &actSpec{kind: "clip", lo: lo, hi: hi}
		return clampKernel(lo, hi), nil
	}})
}
