package run

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// ONNX Tile: the input repeated repeats[i] times along each axis i, any
// dtype.
func init() {
	register("Tile", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(2, 2, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow(); err != nil {
			return nil, err
		}
		if e := c.in[1].elem; e != 0 && e != elemInt64 {
			return nil, c.n.errorf("input 1 %q (repeats) is %v; expected INT64", c.n.Inputs[1], e)
		}
		c.out[0] = info{elem: c.in[0].elem}
		if reps, ok := c.in[1].ints(); ok && c.in[0].shape != nil {
			out, err := tiledShape(c.in[0].shape, reps)
			if err != nil {
				return nil, c.n.errorf("%v", err)
			}
			c.out[0].shape = out
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			reps := make([]int64, in[1].Size())
			for i := range reps {
				reps[i] = intAt(in[1], i)
			}
			x := in[0]
			out, err := tiledShape([]int(x.Shape()), reps)
			if err != nil {
				return nil, err
			}
			if size(out) > maxElems {
				return nil, errTooBig(out)
			}
			// Tile is a broadcast of x viewed with a 1 before each axis
			// to [reps[0], d0, reps[1], d1, ...], read back as out.
			view := make([]int, 0, 2*len(out))
			wide := make([]int, 0, 2*len(out))
			for i, d := range []int(x.Shape()) {
				view = append(view, 1, d)
				wide = append(wide, int(reps[i]), d)
			}
			xv, err := x.Reshape(view...)
			if err != nil {
				return nil, err
			}
			y, err := expandAny(xv, wide)
			if err != nil {
				return nil, err
			}
			y, err = y.Reshape(out...)
			return []*tensor.Tensor{y}, err
		}, nil
	}})
}

// tiledShape is Tile's output shape (-1 for unknown dims).
func tiledShape(shape []int, reps []int64) ([]int, error) {
	if len(reps) != len(shape) {
		return nil, fmt.Errorf("repeats %v for rank %d; expected one repeat per axis", reps, len(shape))
	}
	out := make([]int, len(shape))
	for i, r := range reps {
		if r < 0 || r > maxElems {
			return nil, fmt.Errorf("repeats %v; expected counts of at least 0", reps)
		}
		out[i] = -1
		if shape[i] >= 0 {
			out[i] = shape[i] * int(r)
		}
	}
	return out, nil
}
