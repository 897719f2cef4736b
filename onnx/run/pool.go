package run

import (
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX MaxPool and AveragePool over 1-D and 2-D inputs, on ops.MaxPool2D
// and ops.AvgPool2D (a 1-D pool runs over a height of 1), and
// GlobalAveragePool and GlobalMaxPool as means and maxima over the
// spatial axes. Padded cells never win a max and, with count_include_pad
// 0 (the default), are left out of an average, as in ONNX; ceil_mode adds
// padding at the end of each axis so that the last partial window is
// kept, which those two rules make exact. Dilated pools and the Indices
// output are not supported.
func init() {
	register("MaxPool", opDef{compile: func(c *ctx) (kernel, error) { return compilePool(c, true) }})
	register("AveragePool", opDef{compile: func(c *ctx) (kernel, error) { return compilePool(c, false) }})
	register("GlobalAveragePool", opDef{compile: func(c *ctx) (kernel, error) { return compileGlobalPool(c, false) }})
	register("GlobalMaxPool", opDef{compile: func(c *ctx) (kernel, error) { return compileGlobalPool(c, true) }})
}

func compilePool(c *ctx, isMax bool) (kernel, error) {
	if err := c.arity(1, 1, 1); err != nil {
		return nil, err
	}
	allowed := []string{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"}
	if isMax {
		allowed = append(allowed, "storage_order")
	} else {
		allowed = append(allowed, "count_include_pad")
	}
	if err := c.n.allow(allowed...); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	r := c.rank(0)
	if r < 0 {
		return nil, c.n.errorf("the rank of X is unknown; expected it known at compile time")
	}
	win, err := c.readWindow(r - 2)
	if err != nil {
		return nil, err
	}
	if win.kernel == ([2]int{}) {
		return nil, c.n.errorf("has no kernel_shape; expected the window size")
	}
	if win.dilate != [2]int{1, 1} {
		return nil, c.n.errorf("dilations %v are not supported; expected 1", win.dilate)
	}
	ceil, err := c.n.intAttr("ceil_mode", 0)
	if err != nil {
		return nil, err
	}
	if !isMax {
		cip, err := c.n.intAttr("count_include_pad", 0)
		if err != nil {
			return nil, err
		}
		if cip != 0 && win.pad != [4]int{} {
			return nil, c.n.errorf("count_include_pad 1 with pads %v is not supported; expected count_include_pad 0 or no padding", win.pad)
		}
	}
	if so, err := c.n.intAttr("storage_order", 0); err != nil || so != 0 {
		if err != nil {
			return nil, err
		}
		return nil, c.n.errorf("storage_order %d is not supported; expected 0 (row major)", so)
	}
	if ceil != 0 && win.padding != ops.PadExplicit {
		return nil, c.n.errorf("ceil_mode 1 with auto_pad is not supported; expected explicit pads")
	}
	x := c.in[0]
	c.out[0] = info{elem: x.elem}
	if x.shape != nil {
		c.out[0].shape = win.outShape(x.shape, x.shape[1], win.kernel, ceil != 0)
	}
	// attrsFor is the pool's attributes over an input of h×w.
	attrsFor := func(h, w int) ops.Pool2DAttrs {
		a := ops.Pool2DAttrs{Kernel: win.kernel, Stride: win.stride, Pad: win.pad, Padding: win.padding}
		if ceil != 0 {
			for axis, in := range [2]int{h, w} {
				out := win.outSize(axis, in, win.kernel[axis], true)
				// ONNX drops a last window that starts in the end padding.
				if (out-1)*win.stride[axis] >= in+win.pad[2*axis] {
					out--
				}
				need := (out-1)*win.stride[axis] + win.kernel[axis] - in - win.pad[2*axis]
				a.Pad[2*axis+1] = max(a.Pad[2*axis+1], need)
			}
		}
		return a
	}
	if s := x.shape; c.plan && r == 4 && known(s) {
		if isMax {
			c.lower = lowerOp(ops.MaxPool2DOp(attrsFor(s[2], s[3])))
		} else {
			c.lower = lowerOp(ops.AvgPool2DOp(attrsFor(s[2], s[3])))
		}
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x := in[0]
		if x.Rank() != r {
			return nil, ops.Errorf("pool", in, "want X of rank %d as declared", r)
		}
		var err error
		if r == 3 {
			if x, err = x.Reshape(x.Dim(0), x.Dim(1), 1, x.Dim(2)); err != nil {
				return nil, err
			}
		}
		a := attrsFor(x.Dim(2), x.Dim(3))
		var y *tensor.Tensor
		if isMax {
			y, err = ops.MaxPool2D(x, a)
		} else {
			y, err = ops.AvgPool2D(x, a)
		}
		if err != nil || r == 4 {
			return []*tensor.Tensor{y}, err
		}
		y, err = y.Reshape(y.Dim(0), y.Dim(1), y.Dim(3))
		return []*tensor.Tensor{y}, err
	}, nil
}

func compileGlobalPool(c *ctx, isMax bool) (kernel, error) {
	if err := c.unaryHead(); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	r := c.rank(0)
	if r >= 0 && r < 3 {
		return nil, c.n.errorf("X has rank %d; expected [N, C, spatial...]", r)
	}
	if s := c.in[0].shape; s != nil {
		out := append([]int{}, s...)
		for i := 2; i < len(out); i++ {
			out[i] = 1
		}
		c.out[0].shape = out
		if !isMax && len(s) == 4 && known(s) {
			c.lower = lowerGlobalAvgPool(s[0], s[1])
		}
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x := in[0]
		if x.Rank() < 3 {
			return nil, ops.Errorf("global pool", in, "want X [N, C, spatial...]")
		}
		axes := make([]int, 0, x.Rank()-2)
		for i := 2; i < x.Rank(); i++ {
			axes = append(axes, i)
		}
		var y *tensor.Tensor
		var err error
		switch {
		case isMax:
			y, err = ops.Max(x, axes, true)
		case x.Rank() == 4:
			if y, err = ops.GlobalAvgPool2D(x); err == nil {
				y, err = y.Reshape(x.Dim(0), x.Dim(1), 1, 1)
			}
		default:
			y, err = ops.Mean(x, axes, true)
		}
		return []*tensor.Tensor{y}, err
	}, nil
}

// lowerGlobalAvgPool is the plan form of a mean over the spatial axes of
// an [n, c, H, W] input keeping them as 1s (GlobalAveragePool, ReduceMean
// over axes 2 and 3): global_avg_pool2d to [n, c], then a view as
// [n, c, 1, 1].
func lowerGlobalAvgPool(n, c int) lowerFn {
	return func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		y := b.Op(ops.GlobalAvgPool2DOp(), in[0])
		return []infer.Ref{b.Op(ops.ReshapeOp(n, c, 1, 1), y)}, nil
	}
}
