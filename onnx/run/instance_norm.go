package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX InstanceNormalization (opset 6): each sample's channel of X
// [N, C, D1, ...] normalised over its spatial positions, then scaled and
// shifted per channel, on ops.InstanceNorm.
func init() {
	register("InstanceNormalization", opDef{compile: compileInstanceNorm})
}

func compileInstanceNorm(c *ctx) (kernel, error) {
	if err := c.arity(3, 3, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("epsilon"); err != nil {
		return nil, err
	}
	eps, err := c.epsilon()
	if err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2); err != nil {
		return nil, err
	}
	x := c.in[0].shape
	if x != nil && len(x) < 3 {
		return nil, c.n.errorf("input has shape %s; expected [N, C, D1, ...] of rank 3 or more", shapeStr(x))
	}
	if err := perChannel(c, x, 1, 2); err != nil {
		return nil, err
	}
	c.out[0] = info{elem: c.in[0].elem, shape: x}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := ops.InstanceNorm(in[0], in[1], in[2], float64(eps))
		return []*tensor.Tensor{y}, err
	}, nil
}

// perChannel checks that inputs idx are [C] for X of shape x (known parts).
func perChannel(c *ctx, x []int, idx ...int) error {
	if x == nil || len(x) < 2 {
		return nil
	}
	for _, i := range idx {
		if s := c.in[i].shape; !compatible(s, []int{x[1]}) {
			return c.n.errorf("input %d %q has shape %s for X %s; expected [%d], one value per channel", i, c.n.Inputs[i], shapeStr(s), shapeStr(x), x[1])
		}
	}
	return nil
}

// epsilon reads the node's epsilon attribute (default 1e-5, ONNX's for the
// normalisations), which must be positive.
func (c *ctx) epsilon() (float32, error) {
	eps, err := c.n.floatAttr("epsilon", 1e-5)
	if err != nil {
		return 0, err
	}
	if eps <= 0 {
		return 0, c.n.errorf("epsilon %v; expected a positive epsilon", eps)
	}
	return eps, nil
}
