package run

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX CumSum (opset 11, 14): the cumulative sum of x along the axis given
// as input 1 (a scalar or one-element int tensor, negative counting from
// the end), with the exclusive and reverse attributes of tf.math.cumsum.
// Float x runs on ops.CumSum; int x (position ids from a mask) is summed
// exactly here.
func init() {
	register("CumSum", opDef{compile: compileCumSum})
}

func compileCumSum(c *ctx) (kernel, error) {
	if err := c.arity(2, 2, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("exclusive", "reverse"); err != nil {
		return nil, err
	}
	excl, err := c.n.intAttr("exclusive", 0)
	if err != nil {
		return nil, err
	}
	rev, err := c.n.intAttr("reverse", 0)
	if err != nil {
		return nil, err
	}
	if e := c.in[0].elem; e != 0 && !isFloatElem(e) && !isIntElem(e) {
		return nil, c.n.errorf("input 0 %q is %v; expected FLOAT, DOUBLE, INT32 or INT64", c.n.Inputs[0], e)
	}
	if e := c.in[1].elem; e != 0 && !isIntElem(e) {
		return nil, c.n.errorf("input 1 %q (axis) is %v; expected INT32 or INT64", c.n.Inputs[1], e)
	}
	if s := c.in[1].shape; s != nil && size(s) != 1 && known(s) {
		return nil, c.n.errorf("input 1 %q (axis) has shape %s; expected a scalar", c.n.Inputs[1], shapeStr(s))
	}
	if r := c.rank(0); r == 0 {
		return nil, c.n.errorf("input 0 %q is a scalar; expected rank 1 or more", c.n.Inputs[0])
	}
	if v, ok := c.in[1].ints(); ok && len(v) == 1 && c.rank(0) > 0 {
		if _, err := c.n.axis(v[0], c.rank(0), "axis"); err != nil {
			return nil, err
		}
	}
	c.out[0] = info{elem: c.in[0].elem, shape: c.in[0].shape}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x := in[0]
		if in[1].Size() != 1 {
			return nil, fmt.Errorf("axis has shape %v; expected a scalar", in[1].Shape())
		}
		a := intAt(in[1], 0)
		if x.Rank() == 0 || a < -int64(x.Rank()) || a >= int64(x.Rank()) {
			return nil, fmt.Errorf("axis %d is out of range for input %v; expected -%d to %d", a, x.Shape(), x.Rank(), x.Rank()-1)
		}
		attrs := ops.CumSumAttrs{Axis: int(a), Exclusive: excl != 0, Reverse: rev != 0}
		if x.DType().IsFloat() {
			y, err := ops.CumSum(x, attrs)
			return []*tensor.Tensor{y}, err
		}
		return []*tensor.Tensor{cumsumInts(x, attrs)}, nil
	}, nil
}

// cumsumInts is CumSum on an int tensor with a valid axis.
func cumsumInts(x *tensor.Tensor, a ops.CumSumAttrs) *tensor.Tensor {
	s := []int(x.Shape())
	ax := a.Axis
	if ax < 0 {
		ax += len(s)
	}
	outer, n, inner := size(s[:ax]), s[ax], size(s[ax+1:])
	y := newTensor(x.DType(), s)
	for o := range outer {
		for e := range inner {
			var acc int64
			for k := range n {
				i := k
				if a.Reverse {
					i = n - 1 - k
				}
				p := (o*n+i)*inner + e
				v := intAt(x, p)
				if a.Exclusive {
					setInt(y, p, acc)
					acc += v
				} else {
					acc += v
					setInt(y, p, acc)
				}
			}
		}
	}
	return y
}
