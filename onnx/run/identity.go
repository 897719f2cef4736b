package run

import (
	"github.com/plumbml/plumb/tensor"
)

// ONNX Identity and Dropout at inference (the identity: its ratio is
// ignored, as ONNX specifies when training_mode is false; the mask output
// is not supported). Cast is in cast.go.
func init() {
	register("Identity", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.unaryHead(); err != nil {
			return nil, err
		}
		c.out[0] = c.in[0]
		c.out[0].konst = nil
		c.lower = lowerIdentity
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) { return []*tensor.Tensor{in[0]}, nil }, nil
	}})
	register("Dropout", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(1, 3, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("seed", "ratio"); err != nil {
			return nil, err
		}
		if c.has(2) {
			v, ok := c.in[2].ints()
			if !ok || len(v) != 1 || v[0] != 0 {
				return nil, c.n.errorf("input 2 (training_mode) is not a constant false; expected inference (training_mode absent or false)")
			}
		}
		c.out[0] = info{elem: c.in[0].elem, shape: c.in[0].shape}
		if len(c.n.Outputs) < 2 || c.n.Outputs[1] == "" {
			c.lower = lowerIdentity
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) { return []*tensor.Tensor{in[0]}, nil }, nil
	}})
}
