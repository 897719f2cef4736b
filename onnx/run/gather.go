package run

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Gather along axis: the output is data[:axis] + indices.shape +
// data[axis+1:], with negative indices counted from the end of the axis.
// Float data (embeddings) runs on ops.Gather; int data (a shape vector)
// on gatherInts, whose known elements carry through.
func init() {
	register("Gather", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(2, 2, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("axis"); err != nil {
			return nil, err
		}
		a, err := c.n.intAttr("axis", 0)
		if err != nil {
			return nil, err
		}
		if e := c.in[1].elem; e != 0 && !isIntElem(e) {
			return nil, c.n.errorf("input 1 %q (indices) is %v; expected INT32 or INT64", c.n.Inputs[1], e)
		}
		data, idx := c.in[0], c.in[1]
		c.out[0] = info{elem: data.elem}
		if data.shape != nil && idx.shape != nil {
			axis, err := c.n.axis(a, len(data.shape), "axis")
			if err != nil {
				return nil, err
			}
			out := append(append(append([]int{}, data.shape[:axis]...), idx.shape...), data.shape[axis+1:]...)
			c.out[0].shape = out
			if isFloatElem(data.elem) {
				c.lower = lowerOp(&gatherOp{axis: axis})
			}
			if iv, ok := idx.ints(); ok && len(data.shape) == 1 && data.part != nil {
				part := make([]int64, len(iv))
				for i, j := range iv {
					if j < 0 {
						j += int64(len(data.part))
					}
					if j < 0 || j >= int64(len(data.part)) {
						return nil, c.n.errorf("index %d is out of range for data %s; expected -%d to %d", iv[i], shapeStr(data.shape), len(data.part), len(data.part)-1)
					}
					part[i] = data.part[j]
				}
				c.out[0].part = part
			}
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			x := in[0]
			axis := a
			if axis < 0 {
				axis += int64(x.Rank())
			}
			if axis < 0 || axis >= int64(x.Rank()) {
				return nil, fmt.Errorf("axis %d is out of range for rank %d", a, x.Rank())
			}
			n := x.Dim(int(axis))
			ind := tensor.Zeros(tensor.Int64, []int(in[1].Shape())...)
			for i := range ind.Size() {
				j := intAt(in[1], i)
				if j < 0 {
					j += int64(n)
				}
				if j < 0 || j >= int64(n) {
					return nil, fmt.Errorf("index %d is out of range for axis %d of size %d; expected -%d to %d", intAt(in[1], i), axis, n, n, n-1)
				}
				ind.Int64s()[i] = j
			}
			var y *tensor.Tensor
			var err error
			if x.DType().IsFloat() {
				y, err = ops.Gather(x, ind, int(axis))
			} else {
				y = gatherInts(x, ind, int(axis))
			}
			return []*tensor.Tensor{y}, err
		}, nil
	}})
}

// gatherInts is Gather on an int tensor with validated, non-negative
// indices.
func gatherInts(x, ind *tensor.Tensor, axis int) *tensor.Tensor {
	s := []int(x.Shape())
	outer, n, inner := size(s[:axis]), s[axis], size(s[axis+1:])
	shape := append(append(append([]int{}, s[:axis]...), []int(ind.Shape())...), s[axis+1:]...)
	y := newTensor(x.DType(), shape)
	k := ind.Size()
	for o := range outer {
		for i, j := range ind.Int64s() {
			for e := range inner {
				setInt(y, (o*k+i)*inner+e, intAt(x, (o*n+int(j))*inner+e))
			}
		}
	}
	return y
}
