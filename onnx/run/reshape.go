package run

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// ONNX Reshape (target shape as input 1; 0 copies the input's dim unless
// allowzero, -1 is inferred), Flatten (to 2-D at axis), Squeeze and
// Unsqueeze (axes an attribute up to opset 12, an input from 13). All four
// are views of their input's data, and carry an int tensor's known
// elements through.
func init() {
	register("Reshape", opDef{compile: compileReshape})
	register("Flatten", opDef{compile: compileFlatten})
	register("Squeeze", opDef{compile: func(c *ctx) (kernel, error) { return compileSqueeze(c, false) }})
	register("Unsqueeze", opDef{compile: func(c *ctx) (kernel, error) { return compileSqueeze(c, true) }})
}

// reshapeTarget resolves Reshape's target against the input's shape
// (either may hold -1 for dims unknown at compile time).
func reshapeTarget(in []int, target []int64, allowZero bool) ([]int, error) {
	out := make([]int, len(target))
	infer := -1
	for i, d := range target {
		switch {
		case d == 0 && !allowZero:
			if i >= len(in) {
				return nil, fmt.Errorf("target dim %d is 0 (copy) but the input has rank %d", i, len(in))
			}
			out[i] = in[i]
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("target %v has two -1 dims; expected at most one", target)
			}
			infer = i
		case d == unk:
			out[i] = -1
		case d < -1:
			return nil, fmt.Errorf("target %v has dim %d; expected sizes, 0 or -1", target, d)
		default:
			out[i] = int(d)
		}
	}
	if infer >= 0 {
		out[infer] = -1
		if known(in) && knownExcept(out, infer) {
			rest := size(out[:infer]) * size(out[infer+1:])
			if rest == 0 || size(in)%rest != 0 {
				return nil, fmt.Errorf("input of %d elements %v does not fill target %v", size(in), in, target)
			}
			out[infer] = size(in) / rest
		}
	}
	if known(in) && known(out) && size(in) != size(out) {
		return nil, fmt.Errorf("input %v has %d elements but target %v has %d", in, size(in), out, size(out))
	}
	return out, nil
}

func knownExcept(s []int, skip int) bool {
	for i, d := range s {
		if i != skip && d < 0 {
			return false
		}
	}
	return true
}

func compileReshape(c *ctx) (kernel, error) {
	if err := c.arity(2, 2, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("allowzero"); err != nil {
		return nil, err
	}
	az, err := c.n.intAttr("allowzero", 0)
	if err != nil {
		return nil, err
	}
	if e := c.in[1].elem; e != 0 && e != elemInt64 {
		return nil, c.n.errorf("input 1 %q (shape) is %v; expected INT64", c.n.Inputs[1], e)
	}
	c.out[0] = info{elem: c.in[0].elem}
	if c.in[0].shape != nil && c.in[1].part != nil {
		out, err := reshapeTarget(c.in[0].shape, c.in[1].part, az != 0)
		if err != nil {
			return nil, c.n.errorf("%v", err)
		}
		c.out[0].shape = out
		if c.in[0].part != nil && known(out) {
			c.out[0].part = c.in[0].part
		}
	}
	c.lowerReshape()
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		if in[1].DType().IsFloat() || in[1].Rank() != 1 {
			return nil, fmt.Errorf("shape is %v %v; expected a 1-D int64 tensor", in[1].DType(), in[1].Shape())
		}
		target := make([]int64, in[1].Size())
		for i := range target {
			target[i] = intAt(in[1], i)
		}
		out, err := reshapeTarget([]int(in[0].Shape()), target, az != 0)
		if err != nil {
			return nil, err
		}
		y, err := in[0].Reshape(out...)
		return []*tensor.Tensor{y}, err
	}, nil
}

func compileFlatten(c *ctx) (kernel, error) {
	if err := c.arity(1, 1, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("axis"); err != nil {
		return nil, err
	}
	axis, err := c.n.intAttr("axis", 1)
	if err != nil {
		return nil, err
	}
	split := func(s []int) ([]int, error) {
		r := len(s)
		a := axis
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a > int64(r) {
			return nil, fmt.Errorf("axis %d is out of range for rank %d; expected %d to %d", axis, r, -r, r)
		}
		outer, inner := 1, 1
		for i, d := range s {
			switch {
			case d < 0 && i < int(a):
				outer = -1
			case d < 0:
				inner = -1
			case i < int(a) && outer >= 0:
				outer *= d
			case i >= int(a) && inner >= 0:
				inner *= d
			}
		}
		return []int{outer, inner}, nil
	}
	c.out[0] = info{elem: c.in[0].elem}
	if s := c.in[0].shape; s != nil {
		out, err := split(s)
		if err != nil {
			return nil, c.n.errorf("%v", err)
		}
		c.out[0].shape = out
	}
	c.lowerReshape()
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		out, err := split([]int(in[0].Shape()))
		if err != nil {
			return nil, err
		}
		y, err := in[0].Reshape(out...)
		return []*tensor.Tensor{y}, err
	}, nil
}

// compileSqueeze compiles Squeeze (unsqueeze false) and Unsqueeze.
func compileSqueeze(c *ctx, unsqueeze bool) (kernel, error) {
	var axes []int64
	hasAxes := false
	if c.n.opset >= 13 {
		if err := c.arity(1, 2, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow(); err != nil {
			return nil, err
		}
		if c.has(1) {
			v, err := c.constInts(1, "axes")
			if err != nil {
				return nil, err
			}
			axes, hasAxes = v, true
		}
	} else {
		if err := c.arity(1, 1, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("axes"); err != nil {
			return nil, err
		}
		v, ok, err := c.n.intsAttr("axes")
		if err != nil {
			return nil, err
		}
		axes, hasAxes = v, ok
	}
	if unsqueeze && !hasAxes {
		return nil, c.n.errorf("has no axes; expected the axes to insert")
	}
	shapeOf := func(s []int) ([]int, error) {
		if unsqueeze {
			r := len(s) + len(axes)
			out := make([]int, 0, r)
			ins := make([]bool, r)
			for _, a := range axes {
				i, err := c.n.axis(a, r, "axis")
				if err != nil {
					return nil, err
				}
				if ins[i] {
					return nil, c.n.errorf("axes %v repeat axis %d; expected distinct axes", axes, i)
				}
				ins[i] = true
			}
			j := 0
			for i := range r {
				if ins[i] {
					out = append(out, 1)
				} else {
					out = append(out, s[j])
					j++
				}
			}
			return out, nil
		}
		drop := make([]bool, len(s))
		for _, a := range axes {
			i, err := c.n.axis(a, len(s), "axis")
			if err != nil {
				return nil, err
			}
			if s[i] > 1 {
				return nil, c.n.errorf("axis %d of input %s has size %d; expected 1 to squeeze", i, shapeStr(s), s[i])
			}
			drop[i] = true
		}
		out := []int{}
		for i, d := range s {
			if hasAxes && !drop[i] || !hasAxes && d != 1 {
				out = append(out, d)
			}
		}
		return out, nil
	}
	c.out[0] = info{elem: c.in[0].elem, part: c.in[0].part}
	if s := c.in[0].shape; s != nil && (hasAxes || known(s)) {
		out, err := shapeOf(s)
		if err != nil {
			return nil, err
		}
		c.out[0].shape = out
	} else {
		c.out[0].part = nil
	}
	c.lowerReshape()
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		out, err := shapeOf(slices.Clone([]int(in[0].Shape())))
		if err != nil {
			return nil, err
		}
		y, err := in[0].Reshape(out...)
		return []*tensor.Tensor{y}, err
	}, nil
}
