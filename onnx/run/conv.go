package run

import (
	"sync"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Conv over 1-D and 2-D inputs (NCW, NCHW) with W [M, C/group, kH,
// kW], optional bias B [M], strides, dilations, pads, auto_pad and group,
// on ops.Conv2D (which takes the same layouts). A 1-D convolution runs as
// a 2-D one over a height of 1.
func init() {
	register("Conv", opDef{compile: compileConv})
}

func compileConv(c *ctx) (kernel, error) {
	if err := c.arity(2, 3, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"); err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2); err != nil {
		return nil, err
	}
	x, w := c.in[0], c.in[1]
	r := -1
	switch {
	case x.shape != nil:
		r = len(x.shape)
	case w.shape != nil:
		r = len(w.shape)
	}
	if r < 0 {
		return nil, c.n.errorf("the ranks of X and W are unknown; expected them known at compile time")
	}
	if r < 3 {
		return nil, c.n.errorf("X has rank %d; expected [N, C, W] or [N, C, H, W]", r)
	}
	win, err := c.readWindow(r - 2)
	if err != nil {
		return nil, err
	}
	groups, err := c.n.intAttr("group", 1)
	if err != nil {
		return nil, err
	}
	if groups < 1 || groups > 1<<20 {
		return nil, c.n.errorf("group %d; expected at least 1", groups)
	}
	c.out[0] = info{elem: x.elem}
	if w.shape != nil {
		if len(w.shape) != r {
			return nil, c.n.errorf("W has shape %s for X of rank %d; expected W of rank %d [M, C/group, kernel...]", shapeStr(w.shape), r, r)
		}
		m := w.shape[0]
		if x.shape != nil && x.shape[1] >= 0 && w.shape[1] >= 0 && x.shape[1] != w.shape[1]*int(groups) {
			return nil, c.n.errorf("X has %d channels but W %s with group %d takes %d; expected C = W's dim 1 × group", x.shape[1], shapeStr(w.shape), groups, w.shape[1]*int(groups))
		}
		if c.has(2) && c.in[2].shape != nil && (len(c.in[2].shape) != 1 || m >= 0 && c.in[2].shape[0] >= 0 && c.in[2].shape[0] != m) {
			return nil, c.n.errorf("B has shape %s; expected [%d]", shapeStr(c.in[2].shape), m)
		}
		var k [2]int
		if r == 3 {
			k = [2]int{1, w.shape[2]}
		} else {
			k = [2]int{w.shape[2], w.shape[3]}
		}
		if win.kernel != ([2]int{}) && (k[0] >= 0 && k[0] != win.kernel[0] || k[1] >= 0 && k[1] != win.kernel[1]) {
			return nil, c.n.errorf("kernel_shape %v does not match W %s; expected the kernel dims of W", win.kernel, shapeStr(w.shape))
		}
		c.out[0].shape = win.outShape(x.shape, m, k, false)
	}
	attrs := ops.Conv2DAttrs{Stride: win.stride, Dilation: win.dilate, Pad: win.pad, Padding: win.padding, Groups: int(groups)}
	// A constant W of a 1-D convolution is lifted once, and a constant W
	// is prepared once for the forward kernel (ops.PackConvWeights: the
	// Winograd transform or the channels-last weight matrix), shared
	// read-only by every Run. W that cannot be packed (a shape the op will
	// reject at run time) runs unpacked, so the op reports it.
	wk := w.konst
	if wk != nil && r == 3 {
		if wk, err = wk.Reshape(wk.Dim(0), wk.Dim(1), 1, wk.Dim(2)); err != nil {
			return nil, c.n.wrap(err)
		}
	}
	// The packing is made at the first Run on the interpreter: a model
	// whose signatures all run on plans (which prepare their own) never
	// holds it.
	packed := sync.OnceValue(func() *ops.PackedConvWeights {
		if wk == nil {
			return nil
		}
		p, _ := ops.PackConvWeights(wk, attrs)
		return p
	})
	c.lowerConv(attrs, r, wk)
	op := func() ops.Op { return ops.Conv2DPackedOp(attrs, packed()) }
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		x, w := in[0], in[1]
		var b *tensor.Tensor
		if len(in) > 2 {
			b = in[2]
		}
		var err error
		if r == 3 {
			if x.Rank() != 3 {
				return nil, ops.Errorf("conv", in, "want X of rank 3 as declared")
			}
			if x, err = x.Reshape(x.Dim(0), x.Dim(1), 1, x.Dim(2)); err != nil {
				return nil, err
			}
			if wk == nil {
				if w, err = w.Reshape(w.Dim(0), w.Dim(1), 1, w.Dim(2)); err != nil {
					return nil, err
				}
			}
		}
		if wk != nil {
			w = wk
		}
		var y *tensor.Tensor
		if b == nil {
			y, err = ops.Run(op(), x, w)
		} else {
			y, err = ops.Run(op(), x, w, b)
		}
		if err != nil || r == 4 {
			return []*tensor.Tensor{y}, err
		}
		y, err = y.Reshape(y.Dim(0), y.Dim(1), y.Dim(3))
		return []*tensor.Tensor{y}, err
	}, nil
}

// lowerConv sets the plan form of Conv: conv2d on X, W and B (the plan
// folds, prepares and fuses it); a 1-D convolution reshapes X to a height
// of 1 and back, with W (a constant, wk) lifted once.
func (c *ctx) lowerConv(attrs ops.Conv2DAttrs, r int, wk *tensor.Tensor) {
	x, y := c.in[0].shape, c.out[0].shape
	if !c.plan || !known(x) || !known(y) || (r == 3 && wk == nil) {
		return
	}
	if r == 4 && wk != nil {
		c.conv = &convSpec{attrs: attrs, w: wk}
	}
	c.lower = func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		args := append([]infer.Ref(nil), in...)
		if len(args) > 2 && args[2] < 0 {
			args = args[:2]
		}
		if r == 4 {
			return []infer.Ref{b.Op(ops.Conv2DOp(attrs), args...)}, nil
		}
		args[0] = b.Op(ops.ReshapeOp(x[0], x[1], 1, x[2]), args[0])
		args[1] = b.Const(wk)
		out := b.Op(ops.Conv2DOp(attrs), args...)
		return []infer.Ref{b.Op(ops.ReshapeOp(y...), out)}, nil
	}
}
