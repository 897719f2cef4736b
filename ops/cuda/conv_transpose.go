//go:build cuda

package cuda

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// conv2dTransposeLauncher is one application of ops.Conv2DTransposeOp(attrs) on
// the device: the transposed convolution of x [N, C, H, W] with w [C,
// O/groups, KH, KW] plus an optional bias [O], giving [N, O, OH, OW], the
// gradient of conv2d with respect to its input (PyTorch's
// conv_transpose2d, tf.nn.conv2d_transpose). It runs on conv2d's kernels
// with the roles swapped, as ops does: the forward pass is conv2d's data
// gradient (batched GEMM wᵀ·x, then col2im), the data gradient is conv2d's
// forward pass of the upstream gradient, and the filter gradient is
// conv2d's with the upstream gradient as the convolution's input and x as
// its output gradient. Forward keeps references to its inputs, which must
// stay unchanged until Backward.
type conv2dTransposeLauncher struct {
	d     *Device
	attrs ops.Conv2DTransposeAttrs

	// Saved by Forward: the convolution this op is the data gradient of,
	// whose input is this op's output, with its padding resolved.
	conv    *conv2dLauncher
	pad     [4]int
	x, w, b *Buffer
}

// conv2dTransposeOp returns the op of ops.Conv2DTransposeOp(attrs) on the
// device.
func (d *Device) conv2dTransposeOp(attrs ops.Conv2DTransposeAttrs) *conv2dTransposeLauncher {
	return &conv2dTransposeLauncher{d: d, attrs: attrs}
}

// check validates the inputs as ops' conv2d_transpose does and saves the
// geometry: OH = (H−1)·stride − pad_top − pad_bottom + (KH−1)·dilation + 1
// + output_padding with explicit or VALID padding (PyTorch's rule), and
// OH = H·stride with SAME padding (TF's), likewise OW.
func (o *conv2dTransposeLauncher) check(x, w, b *Buffer) error {
	const op = "conv2d_transpose"
	in := []*Buffer{x, w}
	if b != nil {
		in = append(in, b)
	}
	if err := o.d.checkInputs(op, in...); err != nil {
		return err
	}
	// Ranks, groups, output padding, padding and bias were checked by
	// ops.Dispatch (conv2dTransposeOp.Check); this derives the device
	// geometry.
	a, opad := o.attrs.Conv2DAttrs, o.attrs.OutputPadding
	for _, v := range []*int{&a.Stride[0], &a.Stride[1], &a.Dilation[0], &a.Dilation[1], &a.Groups} {
		if *v == 0 {
			*v = 1
		}
	}
	xs, ws := x.shape, w.shape
	g := geom{C: ws[1] * a.Groups, KH: ws[2], KW: ws[3], SH: a.Stride[0], SW: a.Stride[1], DH: a.Dilation[0], DW: a.Dilation[1]}
	oh, ow := xs[2], xs[3] // the convolution's output is this op's input
	pad := a.Pad
	switch a.Padding {
	case ops.PadSame:
		g.H, g.W = oh*g.SH, ow*g.SW
	default:
		g.H = (oh-1)*g.SH - pad[0] - pad[1] + (g.KH-1)*g.DH + 1 + opad[0]
		g.W = (ow-1)*g.SW - pad[2] - pad[3] + (g.KW-1)*g.DW + 1 + opad[1]
	}
	var err error
	if pad, err = g.pad(a.Padding, pad); err != nil {
		return err
	}
	if g.OH != oh || g.OW != ow {
		return opError(op, in, "padding %v maps an output of %dx%d to %dx%d, not the input's %dx%d", pad, g.H, g.W, g.OH, g.OW, oh, ow)
	}
	o.conv = &conv2dLauncher{d: o.d, g: g, n: xs[0], o: xs[1], group: a.Groups, w: w,
		attrs: ops.Conv2DAttrs{Stride: a.Stride, Dilation: a.Dilation, Pad: pad, Padding: ops.PadExplicit, Groups: a.Groups}}
	o.pad, o.x, o.w, o.b = pad, x, w, b
	return nil
}

// Forward returns the transposed convolution of x with w plus b (which
// may be nil), [N, O, OH, OW].
func (o *conv2dTransposeLauncher) Forward(x, w, b *Buffer) (*Buffer, error) {
	if err := o.check(x, w, b); err != nil {
		return nil, err
	}
	d, c := o.d, o.conv
	g := c.g
	var y *Buffer
	err := d.do(func() error {
		var err error
		if y, err = d.newBuffer(tensor.Float32, tensor.Shape{c.n, g.C, g.H, g.W}); err != nil || y.Size() == 0 {
			return err
		}
		// y = col2im(w[k]ᵀ·x[i, k]) per image i and group k: conv2d's data gradient.
		if err := c.dataGrad(y, x, c.o/c.group, g.rows()/c.group, g.cols(), c.n*c.group); err != nil {
			return err
		}
		if b == nil {
			return nil
		}
		return d.launch("add_bias", grid1(y.Size()), block1, ptr(y), ptr(b), i64(c.n), i64(g.C), i64(g.H*g.W))
	})
	return done(y, err)
}

// Backward returns the gradients for the upstream gradient gout
// [N, O, OH, OW] of the inputs the need flags ask for (x, w, b; nil for
// the others): dx = conv2d(gout, w), dw = conv2d's filter gradient of
// input gout and output gradient x, and db = Σ_{images, pixels} gout.
func (o *conv2dTransposeLauncher) Backward(gout *Buffer, need [3]bool) (dx, dw, db *Buffer, err error) {
	const op = "conv2d_transpose"
	in := []*Buffer{o.x, o.w, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, nil, nil, err
	}
	g := o.conv.g
	// The convolution of gout by w; its Backward with x as the upstream
	// gradient gives this op's filter gradient.
	conv := o.d.conv2dOp(o.conv.attrs)
	if need[0] {
		if dx, err = conv.Forward(gout, o.w, nil); err != nil {
			return nil, nil, nil, err
		}
	} else if err = conv.check(gout, o.w, nil); err != nil {
		return nil, nil, nil, err
	}
	if need[1] {
		if _, dw, _, err = conv.Backward(o.x, [3]bool{false, true, false}); err != nil {
			freeAll(dx)
			return nil, nil, nil, err
		}
	}
	if need[2] && o.b != nil {
		d := o.d
		err = d.do(func() error {
			var err error
			if db, err = d.newBuffer(tensor.Float32, o.b.shape); err != nil {
				return err
			}
			if gout.Size() == 0 {
				return d.zero(db)
			}
			return d.launch("channel_sum", rowGrid(g.C), block1, ptr(gout), ptr(db), i64(o.conv.n), i64(g.C), i64(g.H*g.W))
		})
		if err != nil {
			freeAll(dx, dw, db)
			return nil, nil, nil, err
		}
	}
	return dx, dw, db, nil
}
