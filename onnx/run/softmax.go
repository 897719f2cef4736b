package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Softmax and LogSoftmax: from opset 13 over one axis (default -1),
// on ops.Softmax and ops.LogSoftmax; before 13 over the input coerced to
// 2-D at axis (default 1), i.e. over every axis from axis on.
func init() {
	register("Softmax", opDef{compile: func(c *ctx) (kernel, error) { return compileSoftmax(c, false) }})
	register("LogSoftmax", opDef{compile: func(c *ctx) (kernel, error) { return compileSoftmax(c, true) }})
}

func compileSoftmax(c *ctx, log bool) (kernel, error) {
	if err := c.unaryHead("axis"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	def := int64(-1)
	coerce := c.n.opset < 13
	if coerce {
		def = 1
	}
	a, err := c.n.intAttr("axis", def)
	if err != nil {
		return nil, err
	}
	if r := c.rank(0); r >= 0 {
		if _, err := c.n.axis(a, r, "axis"); err != nil {
			return nil, err
		}
	}
	if r := c.rank(0); r >= 0 && (!coerce || a == -1 || a == int64(r-1)) {
		axis, _ := c.n.axis(a, r, "axis")
		if log {
			c.lower = lowerOp(ops.LogSoftmaxOp(axis))
		} else {
			c.lower = lowerOp(ops.SoftmaxOp(axis))
		}
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x := in[0]
		axis := a
		if axis < 0 {
			axis += int64(x.Rank())
		}
		run := func(x *tensor.Tensor, axis int) (*tensor.Tensor, error) {
			if log {
				return ops.LogSoftmax(x, axis)
			}
			return ops.Softmax(x, axis)
		}
		if !coerce || int(axis) == x.Rank()-1 {
			y, err := run(x, int(axis))
			return []*tensor.Tensor{y}, err
		}
		s := []int(x.Shape())
		flat, err := x.Reshape(size(s[:axis]), size(s[axis:]))
		if err != nil {
			return nil, err
		}
		y, err := run(flat, 1)
		if err != nil {
			return nil, err
		}
		y, err = y.Reshape(s...)
		return []*tensor.Tensor{y}, err
	}, nil
}
