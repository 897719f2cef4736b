package run

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// binaryArith are the broadcasting arithmetic ops (ONNX Add, Sub, Mul,
// Div, Pow; Max, Min and Sum of any number of inputs): float tensors run on package
// ops' binary ops, int tensors (shape arithmetic) on intArith, with
// integer division truncating as ONNX Div on ints does (C semantics).
var binaryArith = map[string]string{
	"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow",
	"Max": "maximum", "Min": "minimum", "Sum": "add",
}

func init() {
	for onnxName, name := range binaryArith {
		register(onnxName, opDef{compile: func(c *ctx) (kernel, error) {
			if onnxName == "Max" || onnxName == "Min" || onnxName == "Sum" {
				if err := c.arity(1, -1, 1); err != nil {
					return nil, err
				}
			} else if err := c.arity(2, 2, 1); err != nil {
				return nil, err
			}
			if err := c.n.allow(); err != nil {
				return nil, err
			}
			if onnxName != "Pow" {
				idx := make([]int, len(c.in))
				for i := range idx {
					idx[i] = i
				}
				if err := c.sameElem(idx...); err != nil {
					return nil, err
				}
			}
			shape, err := c.broadcastInputs()
			if err != nil {
				return nil, err
			}
			elem := c.in[0].elem
			c.out[0] = info{elem: elem, shape: shape}
			if isIntElem(elem) {
				c.out[0].part = c.partArith(name, shape)
				return intArithKernel(name), nil
			}
			if elem != 0 && !isFloatElem(elem) {
				return nil, c.n.errorf("inputs are %v; expected FLOAT, DOUBLE, INT32 or INT64", elem)
			}
			if onnxName != "Pow" || c.in[1].elem == elem {
				c.lower = lowerChain(name)
			}
			if onnxName == "Mul" {
				c.act = &actSpec{kind: "mul"}
			}
			return floatArithKernel(name, onnxName == "Pow"), nil
		}})
	}
}

// broadcastInputs infers the broadcast shape of every given input.
func (c *ctx) broadcastInputs() ([]int, error) {
	shapes := make([][]int, 0, len(c.in))
	for _, in := range c.in {
		if !in.absent {
			shapes = append(shapes, in.shape)
		}
	}
	shape, err := broadcastInfer(shapes...)
	if err != nil {
		strs := make([]string, len(shapes))
		for i, s := range shapes {
			strs[i] = shapeStr(s)
		}
		return nil, c.n.errorf("input shapes %v do not broadcast (%v); expected equal dims or 1 along each axis (NumPy broadcasting)", strs, err)
	}
	return shape, nil
}

// lowerChain is the plan form of a float arithmetic node: the binary op
// applied left to right over its inputs (one input: the identity).
func lowerChain(name string) lowerFn {
	return func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		y := in[0]
		for _, r := range in[1:] {
			y = b.Op(ops.BinaryOp(name), y, r)
		}
		return []infer.Ref{y}, nil
	}
}

func floatArithKernel(name string, pow bool) kernel {
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y := in[0]
		for _, b := range in[1:] {
			if pow && b.DType() != y.DType() {
				var err error
				if b, err = b.Cast(y.DType()); err != nil {
					return nil, err
				}
			}
			var err error
			if y, err = ops.Run(ops.BinaryOp(name), y, b); err != nil {
				return nil, err
			}
		}
		if len(in) == 1 {
			y = y.Clone()
		}
		return []*tensor.Tensor{y}, nil
	}
}

func intArithKernel(name string) kernel {
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y := in[0]
		for _, b := range in[1:] {
			var err error
			if y, err = intBinary(y, b, y.DType(), func(a, b int64) (int64, error) { return intOp(name, a, b) }); err != nil {
				return nil, err
			}
		}
		if len(in) == 1 {
			y = y.Clone()
		}
		return []*tensor.Tensor{y}, nil
	}
}

// intOp is one element of an int arithmetic op.
func intOp(name string, a, b int64) (int64, error) {
	switch name {
	case "add":
		return a + b, nil
	case "sub":
		return a - b, nil
	case "mul":
		return a * b, nil
	case "div":
		if b == 0 {
			return 0, fmt.Errorf("integer division of %d by zero", a)
		}
		return a / b, nil
	case "pow":
		return int64(math.Pow(float64(a), float64(b))), nil
	case "maximum":
		return max(a, b), nil
	case "minimum":
		return min(a, b), nil
	}
	return 0, fmt.Errorf("no int op %q", name)
}

// intBinary applies f to a and b broadcast, element by element, into a
// tensor of dt.
func intBinary(a, b *tensor.Tensor, dt tensor.DType, f func(a, b int64) (int64, error)) (*tensor.Tensor, error) {
	shape, err := broadcastShapeOf(a, b)
	if err != nil {
		return nil, err
	}
	ia, ib := bcastIndex(shape, []int(a.Shape())), bcastIndex(shape, []int(b.Shape()))
	y := newTensor(dt, shape)
	for i := range ia {
		v, err := f(intAt(a, ia[i]), intAt(b, ib[i]))
		if err != nil {
			return nil, err
		}
		setInt(y, i, v)
	}
	return y, nil
}

// partArith computes the known elements of an int op's result from its
// inputs' known elements, when every shape is known and small.
func (c *ctx) partArith(name string, shape []int) []int64 {
	if !known(shape) || size(shape) > maxPart || len(c.in) != 2 {
		return nil
	}
	a, b := c.in[0], c.in[1]
	if a.part == nil || b.part == nil || !known(a.shape) || !known(b.shape) {
		return nil
	}
	ia, ib := bcastIndex(shape, a.shape), bcastIndex(shape, b.shape)
	out := make([]int64, len(ia))
	for i := range out {
		x, y := a.part[ia[i]], b.part[ib[i]]
		if x == unk || y == unk {
			out[i] = unk
			continue
		}
		v, err := intOp(name, x, y)
		if err != nil {
			out[i] = unk
			continue
		}
		out[i] = v
	}
	return out
}

// cmpFn is a comparison, by the sign of a−b (order), or a logical op, by
// the truth of a and b (logic).
type cmpFn struct {
	order func(sign int) bool
	logic func(a, b bool) bool
}

// The comparisons and logical ops, whose outputs are BOOL (held as int64
// 0 and 1): ONNX Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And,
// Or, Xor, with broadcasting.
var compareOps = map[string]cmpFn{
	"Equal":          {order: func(s int) bool { return s == 0 }},
	"Less":           {order: func(s int) bool { return s < 0 }},
	"Greater":        {order: func(s int) bool { return s > 0 }},
	"LessOrEqual":    {order: func(s int) bool { return s <= 0 }},
	"GreaterOrEqual": {order: func(s int) bool { return s >= 0 }},
	"And":            {logic: func(a, b bool) bool { return a && b }},
	"Or":             {logic: func(a, b bool) bool { return a || b }},
	"Xor":            {logic: func(a, b bool) bool { return a != b }},
}

func init() {
	for name, f := range compareOps {
		register(name, opDef{compile: func(c *ctx) (kernel, error) {
			if err := c.arity(2, 2, 1); err != nil {
				return nil, err
			}
			if err := c.n.allow(); err != nil {
				return nil, err
			}
			if err := c.sameElem(0, 1); err != nil {
				return nil, err
			}
			if f.logic != nil && c.in[0].elem != 0 && c.in[0].elem != elemBool {
				return nil, c.n.errorf("inputs are %v; expected BOOL", c.in[0].elem)
			}
			shape, err := c.broadcastInputs()
			if err != nil {
				return nil, err
			}
			c.out[0] = info{elem: elemBool, shape: shape}
			return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
				y, err := compare(in[0], in[1], f)
				return []*tensor.Tensor{y}, err
			}, nil
		}})
	}
	register("Not", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.unaryHead(); err != nil {
			return nil, err
		}
		if c.in[0].elem != 0 && c.in[0].elem != elemBool {
			return nil, c.n.errorf("input is %v; expected BOOL", c.in[0].elem)
		}
		c.out[0].elem = elemBool
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			x := in[0]
			y := newTensor(tensor.Int64, []int(x.Shape()))
			for i := range x.Size() {
				if intAt(x, i) == 0 {
					y.Int64s()[i] = 1
				}
			}
			return []*tensor.Tensor{y}, nil
		}, nil
	}})
}

// compare applies f to a and b broadcast, giving 0 or 1 as int64. Int
// inputs compare exactly, float ones as float64 (a NaN compares false).
func compare(a, b *tensor.Tensor, f cmpFn) (*tensor.Tensor, error) {
	shape, err := broadcastShapeOf(a, b)
	if err != nil {
		return nil, err
	}
	ia, ib := bcastIndex(shape, []int(a.Shape())), bcastIndex(shape, []int(b.Shape()))
	y := newTensor(tensor.Int64, shape)
	exact := !a.DType().IsFloat() && !b.DType().IsFloat()
	for i := range ia {
		var r bool
		if exact {
			x, z := intAt(a, ia[i]), intAt(b, ib[i])
			if f.logic != nil {
				r = f.logic(x != 0, z != 0)
			} else {
				r = f.order(sign(x, z))
			}
		} else {
			x, z := a.At(ia[i]), b.At(ib[i])
			switch {
			case f.logic != nil:
				r = f.logic(x != 0, z != 0)
			case math.IsNaN(x) || math.IsNaN(z):
			default:
				r = f.order(sign(x, z))
			}
		}
		y.Int64s()[i] = b2i(r)
	}
	return y, nil
}

func sign[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func init() {
	register("Where", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(3, 3, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow(); err != nil {
			return nil, err
		}
		if e := c.in[0].elem; e != 0 && e != elemBool {
			return nil, c.n.errorf("input 0 %q (condition) is %v; expected BOOL", c.n.Inputs[0], e)
		}
		if err := c.sameElem(1, 2); err != nil {
			return nil, err
		}
		shape, err := c.broadcastInputs()
		if err != nil {
			return nil, err
		}
		elem := c.in[1].elemOr(c.in[2].elem)
		c.out[0] = info{elem: elem, shape: shape}
		return whereKernel(elem), nil
	}})
}

// whereKernel is ONNX Where: float values run on ops.Where, others pick
// element by element.
func whereKernel(elem onnx.ElemType) kernel {
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		cond, a, b := in[0], in[1], in[2]
		if a.DType().IsFloat() {
			y, err := ops.Where(cond, a, b)
			return []*tensor.Tensor{y}, err
		}
		shape, err := broadcastShapeOf(cond, a, b)
		if err != nil {
			return nil, err
		}
		ic, ia, ib := bcastIndex(shape, []int(cond.Shape())), bcastIndex(shape, []int(a.Shape())), bcastIndex(shape, []int(b.Shape()))
		y := newTensor(a.DType(), shape)
		for i := range ic {
			if intAt(cond, ic[i]) != 0 {
				setInt(y, i, intAt(a, ia[i]))
			} else {
				setInt(y, i, intAt(b, ib[i]))
			}
		}
		return []*tensor.Tensor{y}, nil
	}
}
