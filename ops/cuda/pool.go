//go:build cuda

package cuda

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// pool2dLauncher is one application of ops.MaxPool2DOp or ops.AvgPool2DOp on the
// device, over x [N, C, H, W]. Padded cells never count: the max takes the
// first maximum of the clipped window, the average divides by the cells
// inside it. Forward saves, for max, each output's flat input index; Free
// releases it.
type pool2dLauncher struct {
	d     *Device
	max   bool
	attrs ops.Pool2DAttrs

	// Saved by Forward.
	g      geom // one channel per plane: C is N·C of x
	x, arg *Buffer
}

// maxPool2DOp returns the op of ops.MaxPool2DOp(attrs) on the device.
func (d *Device) maxPool2DOp(attrs ops.Pool2DAttrs) *pool2dLauncher {
	return &pool2dLauncher{d: d, max: true, attrs: attrs}
}

// avgPool2DOp returns the op of ops.AvgPool2DOp(attrs) on the device.
func (d *Device) avgPool2DOp(attrs ops.Pool2DAttrs) *pool2dLauncher {
	return &pool2dLauncher{d: d, attrs: attrs}
}

func (o *pool2dLauncher) name() string {
	if o.max {
		return "max_pool2d"
	}
	return "avg_pool2d"
}

// params are the kernels' is_max flag and POOL_PARAMS.
func (o *pool2dLauncher) params() []uint64 {
	g := o.g
	return []uint64{i64(g.C), i64(g.H), i64(g.W), i64(g.KH), i64(g.KW), i64(g.SH), i64(g.SW), i64(g.PT), i64(g.PL), i64(g.OH), i64(g.OW)}
}

// Forward returns the pool of x, [N, C, OH, OW].
func (o *pool2dLauncher) Forward(x *Buffer) (*Buffer, error) {
	op, in, a := o.name(), []*Buffer{x}, o.attrs
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	// x's rank, the window, stride and padding were checked by ops.Dispatch
	// (pool2dOp.Check); this derives the device geometry.
	for i := range a.Stride {
		if a.Stride[i] == 0 {
			a.Stride[i] = a.Kernel[i]
		}
	}
	xs := x.shape
	g := geom{C: xs[0] * xs[1], H: xs[2], W: xs[3], KH: a.Kernel[0], KW: a.Kernel[1], SH: a.Stride[0], SW: a.Stride[1], DH: 1, DW: 1}
	if _, err := g.pad(a.Padding, a.Pad); err != nil {
		return nil, err
	}
	o.Free()
	o.g, o.x = g, x
	d := o.d
	var y *Buffer
	err := d.do(func() error {
		var err error
		if y, err = d.newBuffer(tensor.Float32, tensor.Shape{xs[0], xs[1], g.OH, g.OW}); err != nil || y.Size() == 0 {
			return err
		}
		if o.max {
			if o.arg, err = d.newBuffer(tensor.Int64, y.shape); err != nil {
				return err
			}
		}
		args := append([]uint64{flag(o.max), ptr(x), ptr(y), ptr(o.arg)}, o.params()...)
		return d.launch("pool_fwd", grid1(y.Size()), block1, args...)
	})
	return done(y, err)
}

// Backward returns the gradient of x for the upstream gradient gout: each
// output's gradient goes to its window's maximum, or spread evenly over
// its window's cells.
func (o *pool2dLauncher) Backward(gout *Buffer) (*Buffer, error) {
	op := o.name()
	in := []*Buffer{o.x, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	xs := o.x.shape
	d := o.d
	var dx *Buffer
	err := d.do(func() error {
		var err error
		if dx, err = d.newBuffer(tensor.Float32, xs); err != nil || dx.Size() == 0 {
			return err
		}
		if gout.Size() == 0 {
			return d.zero(dx)
		}
		args := append([]uint64{flag(o.max), ptr(gout), ptr(o.arg), ptr(dx)}, o.params()...)
		return d.launch("pool_bwd", grid1(dx.Size()), block1, args...)
	})
	return done(dx, err)
}

// Free releases the argmax indices Forward saved.
func (o *pool2dLauncher) Free() {
	freeAll(o.arg)
	o.arg, o.x = nil, nil
}
