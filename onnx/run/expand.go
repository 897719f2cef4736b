package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Expand: the input broadcast with the shape input (multidirectional
// broadcasting: a 1 in the shape keeps the input's dim). Float tensors on
// ops.BroadcastTo, others copied element by element.
func init() {
	register("Expand", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(2, 2, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow(); err != nil {
			return nil, err
		}
		if e := c.in[1].elem; e != 0 && e != elemInt64 {
			return nil, c.n.errorf("input 1 %q (shape) is %v; expected INT64", c.n.Inputs[1], e)
		}
		c.out[0] = info{elem: c.in[0].elem}
		if target := shapeFromPart(c.in[1]); target != nil && c.in[0].shape != nil {
			out, err := broadcastInfer(c.in[0].shape, target)
			if err != nil {
				return nil, c.n.errorf("input %s does not broadcast to shape %s (%v); expected dims equal or 1", shapeStr(c.in[0].shape), shapeStr(target), err)
			}
			c.out[0].shape = out
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			target, err := dimsOf(in[1])
			if err != nil {
				return nil, err
			}
			out, err := broadcastInfer([]int(in[0].Shape()), target)
			if err != nil {
				return nil, err
			}
			if size(out) > maxElems {
				return nil, errTooBig(out)
			}
			var y *tensor.Tensor
			if in[0].DType().IsFloat() {
				y, err = ops.BroadcastTo(in[0], out...)
			} else {
				y, err = expandAny(in[0], out)
			}
			return []*tensor.Tensor{y}, err
		}, nil
	}})
}
