package run

import (
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The reductions ReduceMean, ReduceSum, ReduceMax, ReduceMin and
// ReduceLogSumExp over float tensors, on ops.Mean, ops.Sum, ops.Max,
// ops.Min and ops.LogSumExp; ReduceSumSquare is the sum of the squares and
// ReduceL2 its square root. axes is an attribute
// before opset 18 (before 13 for ReduceSum) and an optional input from
// then on; no axes reduces every axis unless noop_with_empty_axes, and
// keepdims (default 1) keeps the reduced axes as 1.
var reduceOps = map[string]reduction{
	"ReduceMean":      {name: "mean", axesInput: 18},
	"ReduceSum":       {name: "sum", axesInput: 13},
	"ReduceMax":       {name: "max", axesInput: 18},
	"ReduceMin":       {name: "min", axesInput: 18},
	"ReduceLogSumExp": {name: "logsumexp", axesInput: 18},
	"ReduceSumSquare": {name: "sum", axesInput: 18, pre: "square"},
	"ReduceL2":        {name: "sum", axesInput: 18, pre: "square", post: "sqrt"},
}

// reduction is one reduce op: the ops reduction, the first opset taking
// axes as an input, and unary ops of package ops applied before and after
// ("" for none).
type reduction struct {
	name      string
	axesInput int64
	pre, post string
}

func init() {
	for onnxName, r := range reduceOps {
		register(onnxName, opDef{compile: func(c *ctx) (kernel, error) { return compileReduce(c, r) }})
	}
}

func compileReduce(c *ctx, r reduction) (kernel, error) {
	name, axesInput := r.name, r.axesInput
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
		if c.plan && known(s) && ax != nil {
			c.lower = lowerReduce(r, s, ax, keep != 0, out)
		}
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		ax, err := resolve(in[0].Rank())
		if err != nil {
			return nil, err
		}
		if ax == nil {
			return []*tensor.Tensor{in[0]}, nil
		}
		x := in[0]
		if r.pre != "" {
			if x, err = ops.Run(ops.UnaryOp(r.pre), x); err != nil {
				return nil, err
			}
		}
		y, err := ops.Run(ops.ReduceOp(name, ax, keep != 0), x)
		if err == nil && r.post != "" {
			y, err = ops.Run(ops.UnaryOp(r.post), y)
		}
		return []*tensor.Tensor{y}, err
	}, nil
}

// lowerReduce is a reduction's plan form: the mean over the spatial axes
// of an [n, c, H, W] input, kept, as global average pooling (the
// squeeze-and-excitation blocks of EfficientNet and MobileNetV3 exported
// as ReduceMean); any other as the reduce op between its pre and post
// element-wise ops, viewed as out (ops' reduction of every axis without
// keepdims is [1], ONNX's a scalar).
func lowerReduce(r reduction, s, ax []int, keep bool, out []int) lowerFn {
	if r.name == "mean" && r.pre == "" && r.post == "" && keep && len(s) == 4 && len(ax) == 2 && min(ax[0], ax[1]) == 2 && max(ax[0], ax[1]) == 3 {
		return lowerGlobalAvgPool(s[0], s[1])
	}
	return func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		x := in[0]
		if r.pre != "" {
			x = b.Op(ops.UnaryOp(r.pre), x)
		}
		y := b.Op(ops.ReduceOp(r.name, ax, keep), x)
		if r.post != "" {
			y = b.Op(ops.UnaryOp(r.post), y)
		}
		return []infer.Ref{b.Op(ops.ReshapeOp(out...), y)}, nil
	}
}
