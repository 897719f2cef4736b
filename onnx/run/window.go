package run

import (
	"github.com/plumbml/plumb/ops"
)

// window is the geometry attributes Conv, MaxPool and AveragePool share
// (ONNX Operators.md), resolved for 1-D or 2-D windows: a 1-D window runs
// as 2-D over a height of 1.
type window struct {
	spatial int    // 1 or 2
	kernel  [2]int // 0 when the attribute is absent (Conv takes it from W)
	stride  [2]int
	dilate  [2]int
	pad     [4]int // top, bottom, left, right
	padding ops.PadMode
}

// readWindow reads kernel_shape, strides, dilations, pads and auto_pad for
// spatial dims (the input's rank minus 2). pads are ONNX's [x1_begin,
// x2_begin, ..., x1_end, x2_end]; auto_pad SAME_UPPER is TF's SAME (the
// odd pixel at the end), VALID no padding; SAME_LOWER is not supported.
func (c *ctx) readWindow(spatial int) (window, error) {
	w := window{spatial: spatial, stride: [2]int{1, 1}, dilate: [2]int{1, 1}}
	if spatial != 1 && spatial != 2 {
		return w, c.n.errorf("input has %d spatial dims; expected 1 or 2 (3-D windows are not supported yet)", spatial)
	}
	read := func(name string, n int, dst []int) error {
		v, ok, err := c.n.intsAttr(name)
		if err != nil || !ok {
			return err
		}
		if len(v) != n {
			return c.n.errorf("attribute %q is %v; expected %d values for %d spatial dims", name, v, n, spatial)
		}
		for i, x := range v {
			if x < 0 || x > 1<<20 {
				return c.n.errorf("attribute %q is %v; expected sizes from 0 to 2^20", name, v)
			}
			dst[i] = int(x)
		}
		return nil
	}
	var ks, st, dl [2]int
	var pads [4]int
	if err := read("kernel_shape", spatial, ks[:]); err != nil {
		return w, err
	}
	if err := read("strides", spatial, st[:]); err != nil {
		return w, err
	}
	if err := read("dilations", spatial, dl[:]); err != nil {
		return w, err
	}
	if err := read("pads", 2*spatial, pads[:]); err != nil {
		return w, err
	}
	// Lift to 2-D: a 1-D window is the width of a height-1 window.
	lift := func(v [2]int, def int) [2]int {
		if spatial == 1 {
			return [2]int{def, v[0]}
		}
		return v
	}
	w.kernel = lift(ks, 1)
	if _, ok := c.n.Attr("kernel_shape"); !ok {
		w.kernel = [2]int{}
	}
	for i, v := range lift(st, 1) {
		if v > 0 {
			w.stride[i] = v
		}
	}
	for i, v := range lift(dl, 1) {
		if v > 0 {
			w.dilate[i] = v
		}
	}
	if spatial == 1 {
		w.pad = [4]int{0, 0, pads[0], pads[1]}
	} else {
		w.pad = [4]int{pads[0], pads[2], pads[1], pads[3]}
	}
	auto, err := c.n.stringAttr("auto_pad", "NOTSET")
	if err != nil {
		return w, err
	}
	switch auto {
	case "NOTSET", "":
		w.padding = ops.PadExplicit
	case "VALID":
		w.padding, w.pad = ops.PadValid, [4]int{}
	case "SAME_UPPER":
		w.padding, w.pad = ops.PadSame, [4]int{}
	default:
		return w, c.n.errorf("auto_pad %q is not supported; expected NOTSET, VALID or SAME_UPPER", auto)
	}
	return w, nil
}

// outSize is the output size along one axis of size in (-1: unknown) for
// a kernel k, or -1.
func (w window) outSize(axis, in, k int, ceil bool) int {
	if in < 0 || k <= 0 {
		return -1
	}
	s, d := w.stride[axis], w.dilate[axis]
	eff := (k-1)*d + 1
	switch w.padding {
	case ops.PadSame:
		return (in + s - 1) / s
	case ops.PadValid:
		if in < eff {
			return 0
		}
		return (in-eff)/s + 1
	}
	total := in + w.pad[2*axis] + w.pad[2*axis+1] - eff
	if total < 0 {
		return 0
	}
	if ceil {
		return (total+s-1)/s + 1
	}
	return total/s + 1
}

// outShape is the [N, C', spatial...] output shape for input shape x (nil
// when unknown) with cout channels and kernel k.
func (w window) outShape(x []int, cout int, k [2]int, ceil bool) []int {
	if x == nil {
		return nil
	}
	out := []int{x[0], cout}
	if w.spatial == 1 {
		return append(out, w.outSize(1, x[2], k[1], ceil))
	}
	return append(out, w.outSize(0, x[2], k[0], ceil), w.outSize(1, x[3], k[1], ceil))
}
