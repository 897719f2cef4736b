//go:build cuda

package cuda

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// geom is a validated convolution or pool over NCHW images, the fields of
// internal/im2col.Geom: C channels of H×W, a KH×KW kernel at strides SH,
// SW and dilations DH, DW, padding PT above and PL left, OH×OW outputs.
type geom struct {
	C, H, W, KH, KW, SH, SW, DH, DW, PT, PL, OH, OW int
}

// rows and cols are the column matrix's sizes per image, C·KH·KW × OH·OW.
func (g geom) rows() int { return g.C * g.KH * g.KW }
func (g geom) cols() int { return g.OH * g.OW }

// params are the geometry as the kernels' GEOM_PARAMS take it.
func (g geom) params() []uint64 {
	return []uint64{i64(g.C), i64(g.H), i64(g.W), i64(g.KH), i64(g.KW), i64(g.SH), i64(g.SW),
		i64(g.DH), i64(g.DW), i64(g.PT), i64(g.PL), i64(g.OH), i64(g.OW)}
}

// pad resolves mode and explicit pads to (top, bottom, left, right),
// which it returns, sets PT and PL and computes OH and OW, as ops does for
// conv2d and the pools.
func (g *geom) pad(mode ops.PadMode, pad [4]int) ([4]int, error) {
	switch mode {
	case ops.PadExplicit:
		if min(pad[0], pad[1], pad[2], pad[3]) < 0 {
			return pad, fmt.Errorf("negative padding %v (top, bottom, left, right)", pad)
		}
	case ops.PadValid, ops.PadSame:
		if pad != [4]int{} {
			return pad, fmt.Errorf("padding mode %v takes no explicit Pad, got %v", mode, pad)
		}
		if mode == ops.PadSame {
			var err error
			if pad, err = ops.SamePadding(g.H, g.W, g.KH, g.KW, g.SH, g.SW, g.DH, g.DW); err != nil {
				return pad, err
			}
		}
	default:
		return pad, fmt.Errorf("unknown padding mode %v", mode)
	}
	effH, effW := (g.KH-1)*g.DH+1, (g.KW-1)*g.DW+1
	if g.H+pad[0]+pad[1] < effH || g.W+pad[2]+pad[3] < effW {
		return pad, fmt.Errorf("dilated kernel %dx%d is larger than the padded input %dx%d (padding %v)",
			effH, effW, g.H+pad[0]+pad[1], g.W+pad[2]+pad[3], pad)
	}
	g.PT, g.PL = pad[0], pad[2]
	g.OH = (g.H+pad[0]+pad[1]-effH)/g.SH + 1
	g.OW = (g.W+pad[2]+pad[3]-effW)/g.SW + 1
	return pad, nil
}

// conv2dLauncher is one application of ops.Conv2DOp on the device: x [N, C, H, W]
// convolved with w [O, C/groups, KH, KW] plus an optional bias [O]. Each
// image is lowered by im2col and multiplied by its group's weights in one
// batched SGEMM launch over images and groups. Forward keeps references
// to its inputs, which must stay unchanged until Backward.
type conv2dLauncher struct {
	d     *Device
	attrs ops.Conv2DAttrs

	// Saved by Forward.
	g           geom
	n, o, group int
	x, w, b     *Buffer
}

// conv2dOp returns the op of ops.Conv2DOp(attrs) on the device.
func (d *Device) conv2dOp(attrs ops.Conv2DAttrs) *conv2dLauncher {
	return &conv2dLauncher{d: d, attrs: attrs}
}

// check validates the inputs as ops' conv2d does and saves the geometry.
func (c *conv2dLauncher) check(x, w, b *Buffer) error {
	const op = "conv2d"
	in := []*Buffer{x, w}
	if b != nil {
		in = append(in, b)
	}
	if err := c.d.checkInputs(op, in...); err != nil {
		return err
	}
	// Ranks, groups, kernel size, padding and bias were checked by
	// ops.Dispatch (conv2dOp.Check); this derives the device geometry.
	a := c.attrs
	for _, v := range []*int{&a.Stride[0], &a.Stride[1], &a.Dilation[0], &a.Dilation[1], &a.Groups} {
		if *v == 0 {
			*v = 1
		}
	}
	xs, ws := x.shape, w.shape
	g := geom{C: xs[1], H: xs[2], W: xs[3], KH: ws[2], KW: ws[3], SH: a.Stride[0], SW: a.Stride[1], DH: a.Dilation[0], DW: a.Dilation[1]}
	if _, err := g.pad(a.Padding, a.Pad); err != nil {
		return err
	}
	c.g, c.n, c.o, c.group = g, xs[0], ws[0], a.Groups
	c.x, c.w, c.b = x, w, b
	return nil
}

// Forward returns the convolution of x with w plus b (which may be nil),
// [N, O, OH, OW].
func (c *conv2dLauncher) Forward(x, w, b *Buffer) (*Buffer, error) {
	if err := c.check(x, w, b); err != nil {
		return nil, err
	}
	d, g := c.d, c.g
	var y *Buffer
	err := d.do(func() error {
		var err error
		if y, err = d.newBuffer(tensor.Float32, tensor.Shape{c.n, c.o, g.OH, g.OW}); err != nil {
			return err
		}
		return c.forward(y)
	})
	return done(y, err)
}

// forward writes the convolution of the inputs check saved into y
// [N, O, OH, OW]; called inside do.
func (c *conv2dLauncher) forward(y *Buffer) error {
	d, g := c.d, c.g
	if y.Size() == 0 {
		return nil
	}
	col, err := c.im2col(c.x)
	if err != nil {
		return err
	}
	defer col.Free()
	og, kg, p := c.o/c.group, g.rows()/c.group, g.cols()
	// y[i, k] (og×p) = w[k] (og×kg) · col[i, k] (kg×p), z = i·groups + k.
	if err := (gemmCall{m: og, n: p, k: kg, batch: c.n * c.group, alpha: 1,
		a: c.w, lda: kg, strideA: og * kg, modA: c.group,
		b: col, ldb: p, strideB: kg * p,
		c: y, ldc: p, strideC: og * p}).run(d); err != nil {
		return err
	}
	if c.b == nil {
		return nil
	}
	return d.launch("add_bias", grid1(y.Size()), block1, ptr(y), ptr(c.b), i64(c.n), i64(c.o), i64(p))
}

// im2col lowers x into a new [N, C·KH·KW, OH·OW] buffer; called inside do.
func (c *conv2dLauncher) im2col(x *Buffer) (*Buffer, error) {
	g := c.g
	col, err := c.d.newBuffer(tensor.Float32, tensor.Shape{c.n, g.rows(), g.cols()})
	if err != nil || col.Size() == 0 {
		return col, err
	}
	args := append([]uint64{ptr(x), ptr(col), i64(c.n)}, g.params()...)
	if err := c.d.launch("im2col", grid1(col.Size()), block1, args...); err != nil {
		col.Free()
		return nil, err
	}
	return col, nil
}

// Backward returns the gradients for the upstream gradient gout
// [N, O, OH, OW] of the inputs the need flags ask for (x, w, b; nil for
// the others): dx = col2im(wᵀ·dy), dw = Σ_images dy·im2col(x)ᵀ and
// db = Σ_{images, pixels} dy. The weight gradient is summed over images
// from per-image partials, so no two threads add into one element.
func (c *conv2dLauncher) Backward(gout *Buffer, need [3]bool) (dx, dw, db *Buffer, err error) {
	const op = "conv2d"
	in := []*Buffer{c.x, c.w, gout}
	if err := c.d.checkInputs(op, in...); err != nil {
		return nil, nil, nil, err
	}
	g := c.g
	d := c.d
	og, kg, p, z := c.o/c.group, g.rows()/c.group, g.cols(), c.n*c.group
	err = d.do(func() error {
		var err error
		if need[0] {
			if dx, err = d.newBuffer(tensor.Float32, c.x.shape); err != nil {
				return err
			}
			if err := c.dataGrad(dx, gout, og, kg, p, z); err != nil {
				return err
			}
		}
		if need[1] {
			if dw, err = d.newBuffer(tensor.Float32, c.w.shape); err != nil {
				return err
			}
			if err := c.filterGrad(dw, gout, og, kg, p, z); err != nil {
				return err
			}
		}
		if need[2] && c.b != nil {
			if db, err = d.newBuffer(tensor.Float32, c.b.shape); err != nil {
				return err
			}
			return d.launch("channel_sum", rowGrid(c.o), block1, ptr(gout), ptr(db), i64(c.n), i64(c.o), i64(p))
		}
		return nil
	})
	if err != nil {
		freeAll(dx, dw, db)
		return nil, nil, nil, err
	}
	return dx, dw, db, nil
}

// dataGrad writes dx = col2im(col) with col[i, k] = w[k]ᵀ·dy[i, k];
// called inside do.
func (c *conv2dLauncher) dataGrad(dx, gout *Buffer, og, kg, p, z int) error {
	d, g := c.d, c.g
	if dx.Size() == 0 {
		return nil
	}
	if p == 0 { // no output pixels: nothing reaches x
		return d.zero(dx)
	}
	col, err := d.newBuffer(tensor.Float32, tensor.Shape{c.n, g.rows(), p})
	if err != nil {
		return err
	}
	defer col.Free()
	if err := (gemmCall{transA: true, m: kg, n: p, k: og, batch: z, alpha: 1,
		a: c.w, lda: kg, strideA: og * kg, modA: c.group,
		b: gout, ldb: p, strideB: og * p,
		c: col, ldc: p, strideC: kg * p}).run(d); err != nil {
		return err
	}
	args := append([]uint64{ptr(col), ptr(dx), i64(c.n)}, g.params()...)
	return d.launch("col2im", grid1(dx.Size()), block1, args...)
}

// filterGrad writes dw[k] = Σ_i dy[i, k]·col[i, k]ᵀ; called inside do.
func (c *conv2dLauncher) filterGrad(dw, gout *Buffer, og, kg, p, z int) error {
	d := c.d
	if dw.Size() == 0 {
		return nil
	}
	if c.n == 0 || p == 0 {
		return d.zero(dw)
	}
	col, err := c.im2col(c.x)
	if err != nil {
		return err
	}
	defer col.Free()
	part, err := d.newBuffer(tensor.Float32, tensor.Shape{c.n, c.o * kg})
	if err != nil {
		return err
	}
	defer part.Free()
	if err := (gemmCall{transB: true, m: og, n: kg, k: p, batch: z, alpha: 1,
		a: gout, lda: p, strideA: og * p, modA: z,
		b: col, ldb: p, strideB: kg * p,
		c: part, ldc: kg, strideC: og * kg}).run(d); err != nil {
		return err
	}
	return d.colSum(part, c.n, c.o*kg, dw)
}
