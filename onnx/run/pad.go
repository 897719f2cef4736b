package run

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// ONNX Pad (opset 11 on: pads, constant_value and, from 18, axes as
// inputs): pads are [begin of each axis..., end of each axis...], negative
// to crop; mode constant (default, constant_value or 0), edge (repeat the
// border), reflect (mirror without repeating it) or wrap. Any dtype.
func init() {
	register("Pad", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(2, 4, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("mode"); err != nil {
			return nil, err
		}
		mode, err := c.n.stringAttr("mode", "constant")
		if err != nil {
			return nil, err
		}
		if mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap" {
			return nil, c.n.errorf("mode %q; expected constant, edge, reflect or wrap", mode)
		}
		if e := c.in[1].elem; e != 0 && e != elemInt64 {
			return nil, c.n.errorf("input 1 %q (pads) is %v; expected INT64", c.n.Inputs[1], e)
		}
		if c.has(2) {
			if err := c.sameElem(0, 2); err != nil {
				return nil, err
			}
		}
		c.out[0] = info{elem: c.in[0].elem}
		if s := c.in[0].shape; s != nil {
			pads, ok := c.in[1].ints()
			var axes []int64
			if c.has(3) {
				axes, ok = c.in[3].ints()
			}
			if ok {
				spec, err := padSpec(s, pads, axes)
				if err != nil {
					return nil, c.n.errorf("%v", err)
				}
				c.out[0].shape = spec.shape
			}
		}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			x := in[0]
			ints := func(t *tensor.Tensor) []int64 {
				if t == nil {
					return nil
				}
				v := make([]int64, t.Size())
				for i := range v {
					v[i] = intAt(t, i)
				}
				return v
			}
			var axes []int64
			if len(in) > 3 {
				axes = ints(in[3])
			}
			spec, err := padSpec([]int(x.Shape()), ints(in[1]), axes)
			if err != nil {
				return nil, err
			}
			if size(spec.shape) > maxElems {
				return nil, errTooBig(spec.shape)
			}
			var fill *tensor.Tensor
			if len(in) > 2 && in[2] != nil {
				if in[2].Size() != 1 {
					return nil, fmt.Errorf("constant_value is %v; expected a scalar", in[2].Shape())
				}
				fill = in[2]
			}
			y, err := spec.apply(x, mode, fill)
			return []*tensor.Tensor{y}, err
		}, nil
	}})
}

// padding is a resolved Pad: per axis the padding before it, and the
// output shape.
type padding struct {
	begin, shape []int
}

func padSpec(shape []int, pads, axes []int64) (padding, error) {
	r := len(shape)
	if axes == nil {
		axes = make([]int64, r)
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	p := padding{begin: make([]int, r), shape: append([]int{}, shape...)}
	if len(pads) != 2*len(axes) {
		return p, fmt.Errorf("pads %v for %d axes; expected %d values (begins, then ends)", pads, len(axes), 2*len(axes))
	}
	for i, a := range axes {
		if a < 0 {
			a += int64(r)
		}
		if a < 0 || a >= int64(r) {
			return p, fmt.Errorf("axes %v; expected axes in [-%d, %d)", axes, r, r)
		}
		b, e := pads[i], pads[len(axes)+i]
		if b < -maxElems || b > maxElems || e < -maxElems || e > maxElems {
			return p, fmt.Errorf("pads %v; expected sizes below 2^31", pads)
		}
		p.begin[a] = int(b)
		if shape[a] < 0 {
			continue
		}
		p.shape[a] = shape[a] + int(b) + int(e)
		if p.shape[a] < 0 {
			return p, fmt.Errorf("pads %v crop axis %d of size %d below 0", pads, a, shape[a])
		}
	}
	return p, nil
}

// source maps output index o along an axis of size d to the input index it
// reads, or -1 for the constant.
func padSource(o, begin, d int, mode string) int {
	s := o - begin
	if s >= 0 && s < d {
		return s
	}
	switch mode {
	case "edge":
		return min(max(s, 0), d-1)
	case "wrap":
		return ((s % d) + d) % d
	case "reflect":
		if d == 1 {
			return 0
		}
		period := 2 * (d - 1)
		s = ((s % period) + period) % period
		if s >= d {
			s = period - s
		}
		return s
	}
	return -1
}

func (p padding) apply(x *tensor.Tensor, mode string, fill *tensor.Tensor) (*tensor.Tensor, error) {
	in := []int(x.Shape())
	for a, d := range in {
		if d == 0 && mode != "constant" && p.shape[a] > 0 {
			return nil, fmt.Errorf("mode %s pads an empty axis %d; expected a nonempty one", mode, a)
		}
	}
	y := newTensor(x.DType(), p.shape)
	n := y.Size()
	if n == 0 {
		return y, nil
	}
	maps := make([][]int, len(in))
	for a := range in {
		maps[a] = make([]int, p.shape[a])
		for o := range maps[a] {
			maps[a][o] = padSource(o, p.begin[a], in[a], mode)
		}
	}
	strides := []int(x.Shape().Strides())
	src := make([]int, n)
	coord := make([]int, len(in))
	for i := range src {
		off := 0
		for a, o := range coord {
			s := maps[a][o]
			if s < 0 {
				off = -1
				break
			}
			off += s * strides[a]
		}
		src[i] = off
		for a := len(coord) - 1; a >= 0; a-- {
			coord[a]++
			if coord[a] < p.shape[a] {
				break
			}
			coord[a] = 0
		}
	}
	for i, s := range src {
		switch {
		case s >= 0 && x.DType().IsFloat():
			y.SetAt(i, x.At(s))
		case s >= 0:
			setInt(y, i, intAt(x, s))
		case fill != nil && fill.DType().IsFloat():
			y.SetAt(i, fill.At(0))
		case fill != nil:
			setInt(y, i, intAt(fill, 0))
		}
	}
	return y, nil
}
