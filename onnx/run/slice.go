package run

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// ONNX Slice (opset 10 and later: starts, ends and the optional axes and
// steps as inputs). Bounds are clamped as the spec says: a negative start
// or end counts from the end of its axis, then starts clamp to [0, dim]
// (to [0, dim-1] for a negative step) and ends to [0, dim] ([-1, dim-1]
// for a negative step); INT64_MAX and INT64_MIN are the usual "to the
// end". Every dtype; a 1-D int input's known elements carry through.
func init() {
	register("Slice", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(3, 5, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow(); err != nil {
			return nil, err
		}
		for i := 1; i < len(c.in); i++ {
			if e := c.in[i].elem; c.has(i) && e != 0 && !isIntElem(e) {
				return nil, c.n.errorf("input %d %q is %v; expected INT32 or INT64", i, c.n.Inputs[i], e)
			}
		}
		c.out[0] = info{elem: c.in[0].elem}
		params := make([][]int64, 4)
		allKnown := true
		for i := range params {
			if !c.has(i + 1) {
				continue
			}
			v, ok := c.in[i+1].ints()
			if !ok {
				allKnown = false
				break
			}
			params[i] = v
		}
		if s := c.in[0].shape; allKnown && s != nil {
			sl, err := sliceSpec(s, params)
			if err != nil {
				return nil, c.n.errorf("%v", err)
			}
			c.out[0].shape = sl.shape
			if len(s) == 1 && c.in[0].part != nil && known(sl.shape) {
				part := make([]int64, sl.shape[0])
				for i := range part {
					part[i] = c.in[0].part[sl.start[0]+i*sl.step[0]]
				}
				c.out[0].part = part
			}
		} else if s != nil {
			c.out[0].shape = slicedRank(c, s)
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			params := make([][]int64, 4)
			for i := range params {
				if i+1 >= len(in) || in[i+1] == nil {
					continue
				}
				params[i] = make([]int64, in[i+1].Size())
				for j := range params[i] {
					params[i][j] = intAt(in[i+1], j)
				}
			}
			sl, err := sliceSpec([]int(in[0].Shape()), params)
			if err != nil {
				return nil, err
			}
			return []*tensor.Tensor{sl.apply(in[0])}, nil
		}, nil
	}})
}

// slicing is a resolved Slice: per axis its first index, step and output
// size.
type slicing struct {
	start, step, shape []int
}

// sliceSpec resolves starts, ends, axes and steps (params, nil when
// absent) against shape, whose dims may be -1 (unknown) at compile time:
// an axis of unknown size gets an unknown output size.
func sliceSpec(shape []int, params [][]int64) (slicing, error) {
	starts, ends, axes, steps := params[0], params[1], params[2], params[3]
	r := len(shape)
	sl := slicing{start: make([]int, r), step: make([]int, r), shape: append([]int{}, shape...)}
	for i := range sl.step {
		sl.step[i] = 1
	}
	if len(starts) != len(ends) || (axes != nil && len(axes) != len(starts)) || (steps != nil && len(steps) != len(starts)) {
		return sl, fmt.Errorf("starts %v, ends %v, axes %v and steps %v differ in length; expected one entry per sliced axis", starts, ends, axes, steps)
	}
	seen := make([]bool, r)
	for k := range starts {
		a := int64(k)
		if axes != nil {
			a = axes[k]
		}
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) || seen[a] {
			return sl, fmt.Errorf("axes %v hold %d; expected distinct axes in [-%d, %d)", axes, a, r, r)
		}
		seen[a] = true
		step := int64(1)
		if steps != nil {
			step = steps[k]
		}
		if step == 0 {
			return sl, fmt.Errorf("steps %v hold 0; expected nonzero steps", steps)
		}
		d := int64(shape[a])
		if d < 0 {
			sl.shape[a] = -1
			continue
		}
		st, en := starts[k], ends[k]
		if st < 0 {
			st += d
		}
		if en < 0 {
			en += d
		}
		var n int64
		if step > 0 {
			st, en = min(max(st, 0), d), min(max(en, 0), d)
			n = max((en-st+step-1)/step, 0)
		} else {
			st, en = min(max(st, 0), d-1), min(max(en, -1), d-1)
			n = max((st-en-step-1)/(-step), 0)
		}
		sl.start[a], sl.step[a], sl.shape[a] = int(st), int(step), int(n)
	}
	return sl, nil
}

// apply copies the slice out of x.
func (sl slicing) apply(x *tensor.Tensor) *tensor.Tensor {
	y := newTensor(x.DType(), sl.shape)
	if y.Size() == 0 {
		return y
	}
	strides := []int(x.Shape().Strides())
	r := len(sl.shape)
	coord := make([]int, r)
	base := 0
	for a := range r {
		base += sl.start[a] * strides[a]
	}
	src := make([]int, y.Size())
	off := base
	for i := range src {
		src[i] = off
		for a := r - 1; a >= 0; a-- {
			coord[a]++
			off += sl.step[a] * strides[a]
			if coord[a] < sl.shape[a] {
				break
			}
			off -= coord[a] * sl.step[a] * strides[a]
			coord[a] = 0
		}
	}
	switch x.DType() {
	case tensor.Float32:
		gatherInto(y.Float32s(), x.Float32s(), src)
	case tensor.Float64:
		gatherInto(y.Float64s(), x.Float64s(), src)
	case tensor.Int32:
		gatherInto(y.Int32s(), x.Int32s(), src)
	default:
		gatherInto(y.Int64s(), x.Int64s(), src)
	}
	return y
}

// slicedRank is a Slice's output shape when its bounds are known only at
// run time: input shape s with the axes that may be sliced unknown (the
// constant axes input's, else the first len(starts), else all).
func slicedRank(c *ctx, s []int) []int {
	out := append([]int{}, s...)
	axes, ok := []int64(nil), false
	switch {
	case c.has(3):
		axes, ok = c.in[3].ints()
	case c.in[1].shape != nil && len(c.in[1].shape) == 1 && c.in[1].shape[0] >= 0 && c.in[1].shape[0] <= len(s):
		for a := range c.in[1].shape[0] {
			axes = append(axes, int64(a))
		}
		ok = true
	}
	for i := range out {
		if !ok {
			out[i] = -1
		}
	}
	for _, a := range axes {
		if a < 0 {
			a += int64(len(s))
		}
		if a >= 0 && a < int64(len(s)) {
			out[a] = -1
		}
	}
	return out
}
