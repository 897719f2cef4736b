package run

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Concat along axis (negative counted from the rank): float tensors
// on ops.Concat, int ones (shape vectors) on tensor.Concat, whose known
// elements are carried through for 1-D inputs.
func init() {
	register("Concat", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(1, -1, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("axis"); err != nil {
			return nil, err
		}
		a, err := c.n.intAttr("axis", 0)
		if _, ok := c.n.Attr("axis"); !ok {
			return nil, c.n.errorf("has no axis; expected the attribute axis")
		}
		if err != nil {
			return nil, err
		}
		idx := make([]int, len(c.in))
		for i := range idx {
			idx[i] = i
		}
		if err := c.sameElem(idx...); err != nil {
			return nil, err
		}
		c.out[0] = info{elem: c.in[0].elem}
		if err := c.concatShape(a); err != nil {
			return nil, err
		}
		float := isFloatElem(c.in[0].elem)
		if r := c.rank(0); float && r > 0 && len(c.in) > 1 {
			if axis, err := c.n.axis(a, r, "axis"); err == nil {
				c.lower = lowerOp(ops.ConcatOp(axis))
			}
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			r := in[0].Rank()
			axis := a
			if axis < 0 {
				axis += int64(r)
			}
			if axis < 0 || axis >= int64(max(r, 1)) {
				return nil, fmt.Errorf("axis %d is out of range for rank %d", a, r)
			}
			var y *tensor.Tensor
			if float && len(in) > 1 {
				y, err = ops.Concat(int(axis), in...)
			} else {
				y, err = tensor.Concat(int(axis), in...)
			}
			return []*tensor.Tensor{y}, err
		}, nil
	}})
}

// concatShape infers Concat's output shape and known elements, checking
// that every dim off the axis agrees.
func (c *ctx) concatShape(a int64) error {
	r := -1
	for _, in := range c.in {
		if in.shape == nil {
			return nil
		}
		if r >= 0 && len(in.shape) != r {
			return c.n.errorf("inputs have ranks %d and %d; expected one rank", r, len(in.shape))
		}
		r = len(in.shape)
	}
	axis, err := c.n.axis(a, r, "axis")
	if err != nil {
		return err
	}
	out := make([]int, r)
	copy(out, c.in[0].shape)
	out[axis] = 0
	for i, in := range c.in {
		for d, v := range in.shape {
			switch {
			case d == axis:
				if v < 0 || out[axis] < 0 {
					out[axis] = -1
				} else {
					out[axis] += v
				}
			case v >= 0 && out[d] >= 0 && v != out[d]:
				return c.n.errorf("input %d %q has shape %s but input 0 has %s; expected equal dims off axis %d", i, c.n.Inputs[i], shapeStr(in.shape), shapeStr(c.in[0].shape), axis)
			case out[d] < 0:
				out[d] = v
			}
		}
	}
	c.out[0].shape = out
	if r == 1 && out[0] >= 0 && out[0] <= maxPart {
		part := make([]int64, 0, out[0])
		for _, in := range c.in {
			if in.part == nil {
				return nil
			}
			part = append(part, in.part...)
		}
		c.out[0].part = part
	}
	return nil
}
