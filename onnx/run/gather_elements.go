package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX GatherElements (opset 11, 13): the output has indices' shape and
// takes data's element at the index on axis, the indices' own position on
// every other axis (torch.gather). Float data runs on ops.GatherElements,
// which also takes negative indices and checks their range at run time;
// int and BOOL data (a token-type buffer) go through byPosition.
func init() {
	register("GatherElements", opDef{compile: compileGatherElements})
}

func compileGatherElements(c *ctx) (kernel, error) {
	a, err := c.axisOnly(2)
	if err != nil {
		return nil, err
	}
	if err := c.indices(1); err != nil {
		return nil, err
	}
	data, idx := c.in[0], c.in[1]
	axis := int(a)
	if data.shape != nil {
		ax, err := c.n.axis(a, len(data.shape), "axis")
		if err != nil {
			return nil, err
		}
		axis = ax
		if idx.shape != nil {
			if len(idx.shape) != len(data.shape) {
				return nil, c.n.errorf("indices %s and data %s have ranks %d and %d; expected them equal", shapeStr(idx.shape), shapeStr(data.shape), len(idx.shape), len(data.shape))
			}
			for d := range data.shape {
				if d != ax && idx.shape[d] >= 0 && data.shape[d] >= 0 && idx.shape[d] > data.shape[d] {
					return nil, c.n.errorf("indices %s is longer than data %s on axis %d; expected at most data's size on every axis but %d", shapeStr(idx.shape), shapeStr(data.shape), d, ax)
				}
			}
		}
	}
	c.out[0] = info{elem: data.elem, shape: idx.shape}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, err := byPosition(in[0], func(x *tensor.Tensor) (*tensor.Tensor, error) { return ops.GatherElements(x, in[1], axis) })
		return []*tensor.Tensor{y}, err
	}, nil
}

// byPosition runs gather, a float gather, on x; for int (or BOOL) x, it
// gathers x's flat positions as float64 (exact below 2^53) and picks x's
// elements at them, so int data follows the float op's semantics and
// checks exactly.
func byPosition(x *tensor.Tensor, gather func(*tensor.Tensor) (*tensor.Tensor, error)) (*tensor.Tensor, error) {
	if x.DType().IsFloat() {
		return gather(x)
	}
	pos := tensor.Empty(tensor.Float64, []int(x.Shape())...)
	for i := range pos.Float64s() {
		pos.Float64s()[i] = float64(i)
	}
	p, err := gather(pos)
	if err != nil {
		return nil, err
	}
	y := newTensor(x.DType(), []int(p.Shape()))
	for i, v := range p.Float64s() {
		setInt(y, i, intAt(x, int(v)))
	}
	return y, nil
}

// floatData checks that input data is FLOAT or DOUBLE and input indices
// INT32 or INT64 (when their types are known).
func (c *ctx) floatData(data, indices int) error {
	if err := c.float(data); err != nil {
		return err
	}
	return c.indices(indices)
}

// indices checks that input i is INT32 or INT64 (when its type is known).
func (c *ctx) indices(i int) error {
	if e := c.in[i].elem; e != 0 && !isIntElem(e) {
		return c.n.errorf("input %d %q (indices) is %v; expected INT32 or INT64", i, c.n.Inputs[i], e)
	}
	return nil
}

// axisOnly checks a node of n inputs and one output whose only attribute
// is axis (default 0), and returns the axis.
func (c *ctx) axisOnly(n int) (int64, error) {
	if err := c.arity(n, n, 1); err != nil {
		return 0, err
	}
	if err := c.n.allow("axis"); err != nil {
		return 0, err
	}
	return c.n.intAttr("axis", 0)
}
