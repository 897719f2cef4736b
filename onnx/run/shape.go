package run

import (
	"github.com/plumbml/plumb/tensor"
)

// ONNX Shape: the input's dims as a 1-D int64 tensor, from start to end
// (attributes from opset 15, negative counted from the rank, clamped).
// Known dims are known elements of the result, so a Shape of a value with
// a symbolic batch dim still folds every other dim downstream.
func init() {
	register("Shape", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(1, 1, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("start", "end"); err != nil {
			return nil, err
		}
		start, err := c.n.intAttr("start", 0)
		if err != nil {
			return nil, err
		}
		end, hasEnd := int64(0), false
		if _, ok := c.n.Attr("end"); ok {
			hasEnd = true
			if end, err = c.n.intAttr("end", 0); err != nil {
				return nil, err
			}
		}
		span := func(r int) (int, int) {
			e := int64(r)
			if hasEnd {
				e = end
			}
			return clampAxis(start, r), clampAxis(e, r)
		}
		c.out[0] = info{elem: elemInt64}
		if s := c.in[0].shape; s != nil {
			from, to := span(len(s))
			n := max(to-from, 0)
			c.out[0].shape = []int{n}
			c.out[0].part = make([]int64, n)
			for i := range n {
				c.out[0].part[i] = int64(s[from+i])
				if s[from+i] < 0 {
					c.out[0].part[i] = unk
				}
			}
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			s := in[0].Shape()
			from, to := span(len(s))
			n := max(to-from, 0)
			y := newTensor(tensor.Int64, []int{n})
			for i := range n {
				y.Int64s()[i] = int64(s[from+i])
			}
			return []*tensor.Tensor{y}, nil
		}, nil
	}})
}

// clampAxis is Shape's and Slice's reading of a bound: negative counts
// from r, then clamped to [0, r].
func clampAxis(a int64, r int) int {
	if a < 0 {
		a += int64(r)
	}
	return int(min(max(a, 0), int64(r)))
}
