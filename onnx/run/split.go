package run

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// ONNX Split along axis into the sizes of split (an attribute before opset
// 13, an optional input from 13), or into as many equal parts as the node
// has outputs (from opset 18, num_outputs parts, the last smaller when the
// axis does not divide evenly).
func init() {
	register("Split", opDef{compile: compileSplit})
}

func compileSplit(c *ctx) (kernel, error) {
	var sizes []int64
	var err error
	if c.n.opset >= 13 {
		if err := c.arity(1, 2, 1<<10); err != nil {
			return nil, err
		}
		if err := c.n.allow("axis", "num_outputs"); err != nil {
			return nil, err
		}
		if c.has(1) {
			if sizes, err = c.constInts(1, "split"); err != nil {
				return nil, err
			}
		}
	} else {
		if err := c.arity(1, 1, 1<<10); err != nil {
			return nil, err
		}
		if err := c.n.allow("axis", "split"); err != nil {
			return nil, err
		}
		if sizes, _, err = c.n.intsAttr("split"); err != nil {
			return nil, err
		}
	}
	a, err := c.n.intAttr("axis", 0)
	if err != nil {
		return nil, err
	}
	parts := len(c.n.Outputs)
	if num, err := c.n.intAttr("num_outputs", int64(parts)); err != nil || num != int64(parts) {
		if err != nil {
			return nil, err
		}
		return nil, c.n.errorf("num_outputs %d but the node has %d outputs; expected them equal", num, parts)
	}
	if sizes != nil && len(sizes) != parts {
		return nil, c.n.errorf("split %v has %d sizes for %d outputs; expected one size per output", sizes, len(sizes), parts)
	}
	resolve := func(shape []int) (int, []int, error) {
		axis := a
		if axis < 0 {
			axis += int64(len(shape))
		}
		if axis < 0 || axis >= int64(len(shape)) {
			return 0, nil, fmt.Errorf("axis %d is out of range for rank %d", a, len(shape))
		}
		d := shape[axis]
		out := make([]int, parts)
		if sizes != nil {
			total := 0
			for i, s := range sizes {
				if s < 0 {
					return 0, nil, fmt.Errorf("split %v has a negative size; expected sizes of at least 0", sizes)
				}
				out[i] = int(s)
				total += int(s)
			}
			if d >= 0 && total != d {
				return 0, nil, fmt.Errorf("split %v sums to %d but axis %d has %d; expected them equal", sizes, total, axis, d)
			}
			return int(axis), out, nil
		}
		if d < 0 {
			for i := range out {
				out[i] = -1
			}
			return int(axis), out, nil
		}
		each := (d + parts - 1) / parts
		for i := range out {
			out[i] = max(min(each, d-i*each), 0)
		}
		return int(axis), out, nil
	}
	if s := c.in[0].shape; s != nil {
		axis, sz, err := resolve(s)
		if err != nil {
			return nil, c.n.errorf("%v", err)
		}
		for i := range c.out {
			o := append([]int{}, s...)
			o[axis] = sz[i]
			c.out[i] = info{elem: c.in[0].elem, shape: o}
		}
	} else {
		for i := range c.out {
			c.out[i] = info{elem: c.in[0].elem}
		}
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		axis, sz, err := resolve([]int(in[0].Shape()))
		if err != nil {
			return nil, err
		}
		out := make([]*tensor.Tensor, parts)
		from := 0
		for i, s := range sz {
			if out[i], err = in[0].Slice(axis, from, from+s); err != nil {
				return nil, err
			}
			from += s
		}
		return out, nil
	}, nil
}
