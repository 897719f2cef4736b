package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The reductions ReduceMean, ReduceSum, ReduceMax and ReduceMin over float
// tensors, on ops.Mean, ops.Sum, ops.Max and ops.Min. axes is an attribute
// before opset 18 (before 13 for ReduceSum) and an optional input from
// then on; no axes reduces every axis unless noop_with_empty_axes, and
// keepdims (default 1) keeps the reduced axes as 1.
var reduceOps = map[string]struct {
	name      string
	axesInput int64 // the first opset taking axes as an input
}{
	"ReduceMean": {"mean", 18},
	"ReduceSum":  {"sum", 13},
	"ReduceMax":  {"max", 18},
	"ReduceMin":  {"min", 18},
}

func init() {
	for onnxName, r := range reduceOps {
		register(onnxName, opDef{compile: func(c *ctx) (kernel, error) { return compileReduce(c, r.name, r.axesInput) }})
	}
}

func compileReduce(c *ctx, name string, axesInput int64) (kernel, error) {
	var axes []int64
	noop := int64(0)
	var err error
	if c.n.opset >= axesInput {
		if err := c.arity(1, 2, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("keepdims", "noop_with_empty_axes"); err != nil {
			return nil, err
		}
		if c.has(1) {
			if axes, err = c.constInts(1, "axes"); err != nil {
				return nil, err
			}
		}
		if noop, err = c.n.intAttr("noop_with_empty_axes", 0); err != nil {
			return nil, err
		}
	} else {
		if err := c.arity(1, 1, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("keepdims", "axes"); err != nil {
			return nil, err
		}
		if axes, _, err = c.n.intsAttr("axes"); err != nil {
			return nil, err
		}
	}
	keep, err := c.n.intAttr("keepdims", 1)
	if err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	resolve := func(r int) ([]int, error) {
		if len(axes) == 0 {
			if noop != 0 {
				return nil, nil
			}
			all := make([]int, r)
			for i := range all {
				all[i] = i
			}
			return all, nil
		}
		out := make([]int, len(axes))
		seen := make([]bool, r)
		for i, a := range axes {
			ax, err := c.n.axis(a, r, "axis")
			if err != nil {
				return nil, err
			}
			if seen[ax] {
				return nil, c.n.errorf("axes %v repeat axis %d; expected distinct axes", axes, ax)
			}
			seen[ax] = true
			out[i] = ax
		}
		return out, nil
	}
	c.out[0] = info{elem: c.in[0].elem}
	if s := c.in[0].shape; s != nil {
		ax, err := resolve(len(s))
		if err != nil {
			return nil, err
		}
		red := make([]bool, len(s))
		for _, a := range ax {
			red[a] = true
		}
		out := []int{}
		for i, d := range s {
			switch {
			case !red[i]:
				out = append(out, d)
			case keep != 0:
				out = append(out, 1)
			}
		}
		c.out[0].shape = out
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		ax, err := resolve(in[0].Rank())
		if err != nil {
			return nil, err
		}
		if ax == nil {
			return []*tensor.Tensor{in[0]}, nil
		}
		y, err := ops.Run(ops.ReduceOp(name, ax, keep != 0), in[0])
		return []*tensor.Tensor{y}, err
	}, nil
}
