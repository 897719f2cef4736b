package ops

import (
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "max_pool2d", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(MaxPool2DOp), CUDA: DeviceKernel})
	register(Spec{Name: "avg_pool2d", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(AvgPool2DOp), CUDA: DeviceKernel})
	register(Spec{Name: "global_avg_pool2d", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(NoAttrs) Op { return GlobalAvgPool2DOp() }), CUDA: DeviceFallback})
}

// Pool2DAttrs are the attributes of a 2-D max or average pool. The zero
// values of Dilation, CeilMode and CountIncludePad are TF's pools; the
// others are ONNX MaxPool's and AveragePool's attributes of those names
// (pool_window.go).
type Pool2DAttrs struct {
	Kernel   [2]int  `json:"kernel"`    // window (height, width); both required
	Stride   [2]int  `json:"strides"`   // (height, width); 0 means the window size, as Keras and PyTorch default
	Pad      [4]int  `json:"pads"`      // padding (top, bottom, left, right), with Padding PadExplicit; each below the window size
	Padding  PadMode `json:"padding"`   // where the padding comes from
	Dilation [2]int  `json:"dilations"` // spacing of the window's taps (height, width); 0 means 1
	// CeilMode rounds the output size up: the last window may run past the
	// trailing padding (ONNX ceil_mode, PyTorch ceil_mode).
	CeilMode bool `json:"ceil_mode"`
	// CountIncludePad makes the average divide by the window's taps inside
	// the padded input, padding included (ONNX and PyTorch
	// count_include_pad); average pool only.
	CountIncludePad bool `json:"count_include_pad"`
}

// plain reports whether a is a TF pool: undilated, floor mode, padding
// left out of the average. Those run the 2-D kernels below; the others
// run the general windowed pool (pool_window.go).
func (a Pool2DAttrs) plain() bool {
	undilated := func(d int) bool { return d == 0 || d == 1 }
	return undilated(a.Dilation[0]) && undilated(a.Dilation[1]) && !a.CeilMode && !a.CountIncludePad
}

type pool2dOp struct {
	max   bool
	attrs Pool2DAttrs

	// Saved by Forward for Backward. Max pool keeps no argmax: Backward
	// recomputes it from x into pooled scratch, as TF's MaxPoolGrad
	// recomputes from orig_input and orig_output, so a step holds no
	// index buffer and allocates none.
	g   im2col.Geom  // one channel per image plane: C is N·C of x
	win *poolWindows // instead of g, for attrs that are not plain
}

// maxArgs runs the max-pool kernel on x, writing the maximums into y and
// their flat input indices into a scratch buffer that it returns.
func maxArgs[T tensor.Float](g im2col.Geom, x, y []T) *[]int {
	arg := getScratch[int](len(y))
	poolKernel(g, *arg, x, y)
	return arg
}

// MaxPool2DOp returns the 2-D max pool of x [N, C, H, W], giving
// [N, C, OH, OW] with OH = (H + pad_top + pad_bottom − KH) / stride + 1
// (likewise OW): tf.nn.max_pool2d with data_format NCHW. Padded cells never
// win. The gradient goes to the first maximum of each window in row-major
// order, as TF's CPU kernel and PyTorch's do on ties. With Dilation or
// CeilMode it is ONNX MaxPool (pool_window.go gives the output size).
func MaxPool2DOp(attrs Pool2DAttrs) Op { return &pool2dOp{max: true, attrs: attrs} }

// AvgPool2DOp returns the 2-D average pool of x [N, C, H, W], shaped as
// MaxPool2DOp's: tf.nn.avg_pool2d with data_format NCHW. Padded cells are
// left out of both the sum and the divisor, as TF does (PyTorch's
// count_include_pad=False), unless CountIncludePad. With Dilation,
// CeilMode or CountIncludePad it is ONNX AveragePool (pool_window.go).
func AvgPool2DOp(attrs Pool2DAttrs) Op { return &pool2dOp{attrs: attrs} }

// MaxPool2D returns the max pool of x; see MaxPool2DOp.
func MaxPool2D(x *tensor.Tensor, attrs Pool2DAttrs) (*tensor.Tensor, error) {
	return run(MaxPool2DOp(attrs), x)
}

// AvgPool2D returns the average pool of x; see AvgPool2DOp.
func AvgPool2D(x *tensor.Tensor, attrs Pool2DAttrs) (*tensor.Tensor, error) {
	return run(AvgPool2DOp(attrs), x)
}

func (o *pool2dOp) Name() string {
	if o.max {
		return "max_pool2d"
	}
	return "avg_pool2d"
}

// geom validates the input and attrs and returns the pool's geometry.
func (o *pool2dOp) geom(in []*tensor.Tensor) (tensor.DType, im2col.Geom, error) {
	op, a := o.Name(), o.attrs
	dt, err := checkShapes(op, in, 1)
	if err != nil {
		return 0, im2col.Geom{}, err
	}
	if in[0].Rank() != 4 {
		return 0, im2col.Geom{}, Errorf(op, in, "want x [N, C, H, W]")
	}
	if a.Kernel[0] < 1 || a.Kernel[1] < 1 || a.Stride[0] < 0 || a.Stride[1] < 0 {
		return 0, im2col.Geom{}, Errorf(op, in, "want a positive kernel and non-negative stride (0 means the kernel), got kernel %v, stride %v", a.Kernel, a.Stride)
	}
	for i := range a.Stride {
		if a.Stride[i] == 0 {
			a.Stride[i] = a.Kernel[i]
		}
	}
	x := in[0].Shape()
	g := im2col.Geom{C: x[0] * x[1], H: x[2], W: x[3], KH: a.Kernel[0], KW: a.Kernel[1], SH: a.Stride[0], SW: a.Stride[1], DH: 1, DW: 1}
	if !a.plain() {
		return dt, g, nil // windows checks the rest
	}
	pad, err := resolvePad(a.Padding, a.Pad, g.H, g.W, g.KH, g.KW, g.SH, g.SW, 1, 1)
	if err != nil {
		return 0, g, Errorf(op, in, "%v", err)
	}
	if max(pad[0], pad[1]) >= g.KH || max(pad[2], pad[3]) >= g.KW {
		return 0, g, Errorf(op, in, "padding %v must be below the kernel %v, so that every window holds an input cell", pad, a.Kernel)
	}
	g.PT, g.PL = pad[0], pad[2]
	var okH, okW bool
	g.OH, okH = windowsOut(g.H, pad[0], pad[1], g.KH, g.SH)
	g.OW, okW = windowsOut(g.W, pad[2], pad[3], g.KW, g.SW)
	if !okH || !okW {
		return 0, g, Errorf(op, in, "kernel %v is larger than the padded input %dx%d (padding %v)",
			a.Kernel, g.H+pad[0]+pad[1], g.W+pad[2]+pad[3], pad)
	}
	return dt, g, nil
}

// windows returns the general windowed pool of attrs that are not plain,
// after geom's checks of x and the kernel and stride, or an error naming
// the op and x for a dilation, padding or window that does not fit.
func (o *pool2dOp) windows(in []*tensor.Tensor, g im2col.Geom) (*poolWindows, error) {
	op, a := o.Name(), o.attrs
	if a.CountIncludePad && o.max {
		return nil, Errorf(op, in, "count_include_pad applies to the average pool only")
	}
	if min(a.Dilation[0], a.Dilation[1]) < 0 {
		return nil, Errorf(op, in, "want a non-negative dilation (0 means 1), got %v", a.Dilation)
	}
	dh, dw := max(a.Dilation[0], 1), max(a.Dilation[1], 1)
	pad, err := resolvePad(a.Padding, a.Pad, g.H, g.W, g.KH, g.KW, g.SH, g.SW, dh, dw)
	if err != nil {
		return nil, Errorf(op, in, "%v", err)
	}
	p := &poolWindows{planes: g.C, max: o.max, inclPad: a.CountIncludePad}
	p.ax[0], _ = newPoolAxis(1, 1, 1, 1, 0, 0, false)
	if p.ax[1], err = newPoolAxis(g.H, g.KH, g.SH, dh, pad[0], pad[1], a.CeilMode); err != nil {
		return nil, Errorf(op, in, "height: %v (kernel %v, dilation %v, padding %v)", err, a.Kernel, a.Dilation, pad)
	}
	if p.ax[2], err = newPoolAxis(g.W, g.KW, g.SW, dw, pad[2], pad[3], a.CeilMode); err != nil {
		return nil, Errorf(op, in, "width: %v (kernel %v, dilation %v, padding %v)", err, a.Kernel, a.Dilation, pad)
	}
	return p, nil
}

// Check is the 2-D pools' device-free check (Checker): x [N, C, H, W],
// the window, stride, dilation and padding.
func (o *pool2dOp) Check(in []*tensor.Tensor) error {
	_, g, err := o.geom(in)
	if err == nil && !o.attrs.plain() {
		_, err = o.windows(in, g)
	}
	return err
}

func (o *pool2dOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity(o.Name(), in, 1); err != nil {
		return nil, err
	}
	dt, g, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	o.g, o.win = g, nil
	x := in[0].Shape()
	if !o.attrs.plain() {
		if o.win, err = o.windows(in, g); err != nil {
			return nil, err
		}
		return runPoolWindows(o.win, in[0], []int{x[0], x[1], o.win.ax[1].out, o.win.ax[2].out}), nil
	}
	out := tensor.Empty(dt, x[0], x[1], g.OH, g.OW) // one write per window
	o.into(g, in, out)
	return out, nil
}

// into runs the pool of geometry g on validated inputs into out.
func (o *pool2dOp) into(g im2col.Geom, in []*tensor.Tensor, out *tensor.Tensor) {
	dt := out.DType()
	switch {
	case !o.max && dt == tensor.Float32:
		poolKernel(g, nil, in[0].Float32s(), out.Float32s())
	case !o.max:
		poolKernel(g, nil, in[0].Float64s(), out.Float64s())
	case dt == tensor.Float32:
		putScratch(maxArgs(g, in[0].Float32s(), out.Float32s()))
	default:
		putScratch(maxArgs(g, in[0].Float64s(), out.Float64s()))
	}
}

func (o *pool2dOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if !need[0] {
		return []*tensor.Tensor{nil}, nil
	}
	if o.win != nil {
		return []*tensor.Tensor{gradPoolWindows(o.win, in[0], gout)}, nil
	}
	gx := tensor.ZerosLike(in[0])
	switch out.DType() {
	case tensor.Float32:
		poolBackward(o.g, o.max, in[0].Float32s(), gout.Float32s(), gx.Float32s())
	case tensor.Float64:
		poolBackward(o.g, o.max, in[0].Float64s(), gout.Float64s(), gx.Float64s())
	}
	return []*tensor.Tensor{gx}, nil
}

// poolBackward adds the gradient dy of the pool of x into dx; for max pool
// it first recomputes the argmax into scratch (ys holds []T buffers for the
// recomputed maximums), the same kernel on the same x as Forward, so ties
// go to the same cell.
func poolBackward[T tensor.Float](g im2col.Geom, max bool, x, dy, dx []T) {
	if !max {
		poolGrad(g, nil, dy, dx)
		return
	}
	y := getScratch[T](len(dy))
	arg := maxArgs(g, x, *y)
	poolGrad(g, *arg, dy, dx)
	putScratch(arg)
	putScratch(y)
}

// The kernels below walk each plane's output rows with the windows'
// column ranges computed once per call, so the inner loops are plain
// slice ranges; 2×2 windows at stride 2 that all lie inside the image
// (MNIST's and VGG's pools) take an unrolled path. Planes are spread over
// goroutines: each writes only its own plane of y, arg and dx. Every
// window is scanned in the reference order (rows, then columns), so the
// results equal pool_test.go's reference bit for bit: the first of equal
// maxima wins, and sums add in the same order.

// poolSpan is a window's clipped range [lo, hi) along one axis.
type poolSpan struct{ lo, hi int }

// windowCols returns the clipped column range of each output column. The
// attrs' check that padding is below the kernel keeps every window
// non-empty.
func windowCols(g im2col.Geom) []poolSpan {
	cols := make([]poolSpan, g.OW)
	for ow := range cols {
		cols[ow] = windowCol(g, ow)
	}
	return cols
}

// windowRows is the clipped row range of output row oh.
func windowRows(g im2col.Geom, oh int) poolSpan {
	h := oh*g.SH - g.PT
	return poolSpan{max(h, 0), min(h+g.KH, g.H)}
}

// pool2x2 reports whether g is a 2×2 stride-2 pool whose windows all lie
// inside the image.
func pool2x2(g im2col.Geom) bool {
	return g.KH == 2 && g.KW == 2 && g.SH == 2 && g.SW == 2 && g.PT == 0 && g.PL == 0 &&
		2*g.OH <= g.H && 2*g.OW <= g.W
}

// poolKernel writes each window's maximum into y and its flat input index
// into arg when arg is non-nil (max pool), else each window's mean.
func poolKernel[T tensor.Float](g im2col.Geom, arg []int, x, y []T) {
	par.ForBatchOf(g.C, poolJob[T]{g: g, arg: arg, x: x, y: y})
}

// windowCol is the clipped column range of output column ow (windowCols).
func windowCol(g im2col.Geom, ow int) poolSpan {
	w := ow*g.SW - g.PL
	return poolSpan{max(w, 0), min(w+g.KW, g.W)}
}

// poolJob is poolKernel's loop over runs of planes.
type poolJob[T tensor.Float] struct {
	g    im2col.Geom
	arg  []int
	x, y []T
}

func (j *poolJob[T]) Range(_, lo, hi int) {
	g, arg, x, y := j.g, j.arg, j.x, j.y
	plane, out, fast := g.H*g.W, g.OH*g.OW, pool2x2(g)
	for c := lo; c < hi; c++ {
		xc := x[c*plane : (c+1)*plane]
		for oh := 0; oh < g.OH; oh++ {
			o := c*out + oh*g.OW
			yr := y[o : o+g.OW]
			switch {
			case fast && arg != nil:
				vec.MaxPool2x2(xc, 2*oh*g.W, g.W, c*plane, yr, arg[o:o+g.OW])
			case fast:
				r0, r1 := xc[2*oh*g.W:][:2*g.OW], xc[(2*oh+1)*g.W:][:2*g.OW]
				for ow := range yr {
					j := 2 * ow
					s := T(0) + r0[j] // from 0 as the general path, so −0 sums alike
					yr[ow] = (s + r0[j+1] + r1[j] + r1[j+1]) / 4
				}
			case arg != nil:
				rows, ar := windowRows(g, oh), arg[o:o+g.OW]
				for ow := range yr {
					cw := windowCol(g, ow)
					at := rows.lo*g.W + cw.lo
					best := xc[at]
					for i := rows.lo; i < rows.hi; i++ {
						for j, v := range xc[i*g.W+cw.lo : i*g.W+cw.hi] {
							if v > best {
								best, at = v, i*g.W+cw.lo+j
							}
						}
					}
					yr[ow], ar[ow] = best, c*plane+at
				}
			default:
				rows := windowRows(g, oh)
				for ow := range yr {
					cw := windowCol(g, ow)
					var s T
					for i := rows.lo; i < rows.hi; i++ {
						for _, v := range xc[i*g.W+cw.lo : i*g.W+cw.hi] {
							s += v
						}
					}
					yr[ow] = s / T((rows.hi-rows.lo)*(cw.hi-cw.lo))
				}
			}
		}
	}
}

// poolGrad adds into dx: with arg, each dy to its window's maximum; else
// each dy spread evenly over its window's input cells.
func poolGrad[T tensor.Float](g im2col.Geom, arg []int, dy, dx []T) {
	cols, plane, out := windowCols(g), g.H*g.W, g.OH*g.OW
	par.ForBatch(g.C, func(_, lo, hi int) {
		if arg != nil {
			for o, at := range arg[lo*out : hi*out] {
				dx[at] += dy[lo*out+o]
			}
			return
		}
		for c := lo; c < hi; c++ {
			dxc := dx[c*plane : (c+1)*plane]
			for oh := 0; oh < g.OH; oh++ {
				rows, dyr := windowRows(g, oh), dy[c*out+oh*g.OW:][:g.OW]
				for ow, cw := range cols {
					d := dyr[ow] / T((rows.hi-rows.lo)*(cw.hi-cw.lo))
					for i := rows.lo; i < rows.hi; i++ {
						row := dxc[i*g.W+cw.lo : i*g.W+cw.hi]
						for j := range row {
							row[j] += d
						}
					}
				}
			}
		}
	})
}

type globalAvgPool2dOp struct{}

// GlobalAvgPool2DOp returns the mean of each channel of x [N, C, H, W] over
// its H·W pixels, giving [N, C]: Keras's GlobalAveragePooling2D with
// data_format "channels_first", i.e. tf.reduce_mean over axes 2 and 3.
func GlobalAvgPool2DOp() Op { return globalAvgPool2dOp{} }

// GlobalAvgPool2D returns the per-channel mean of x; see GlobalAvgPool2DOp.
func GlobalAvgPool2D(x *tensor.Tensor) (*tensor.Tensor, error) { return run(GlobalAvgPool2DOp(), x) }

func (globalAvgPool2dOp) Name() string { return "global_avg_pool2d" }

// checkGlobalAvgPool validates global_avg_pool2d's input and returns its dtype.
func checkGlobalAvgPool(in []*tensor.Tensor) (tensor.DType, error) {
	const op = "global_avg_pool2d"
	dt, err := checkFloat(op, in, 1)
	if err != nil {
		return 0, err
	}
	if in[0].Rank() != 4 || in[0].Dim(2)*in[0].Dim(3) == 0 {
		return 0, Errorf(op, in, "want x [N, C, H, W] with H, W >= 1")
	}
	return dt, nil
}

func (globalAvgPool2dOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkGlobalAvgPool(in)
	if err != nil {
		return nil, err
	}
	out := tensor.Empty(dt, in[0].Dim(0), in[0].Dim(1)) // one write per plane
	globalAvgPoolInto(in[0], out)
	return out, nil
}

// globalAvgPoolInto runs globalAvgPool on validated tensors.
func globalAvgPoolInto(x, out *tensor.Tensor) {
	p := x.Dim(2) * x.Dim(3)
	switch out.DType() {
	case tensor.Float32:
		globalAvgPool(p, x.Float32s(), out.Float32s())
	case tensor.Float64:
		globalAvgPool(p, x.Float64s(), out.Float64s())
	}
}

func (globalAvgPool2dOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if !need[0] {
		return []*tensor.Tensor{nil}, nil
	}
	gx := tensor.ZerosLike(in[0])
	p := in[0].Dim(2) * in[0].Dim(3)
	switch out.DType() {
	case tensor.Float32:
		globalAvgPoolGrad(p, gout.Float32s(), gx.Float32s())
	case tensor.Float64:
		globalAvgPoolGrad(p, gout.Float64s(), gx.Float64s())
	}
	return []*tensor.Tensor{gx}, nil
}

// globalAvgPool writes the mean of each run of p elements of x into y.
func globalAvgPool[T tensor.Float](p int, x, y []T) {
	for i := range y {
		var s T
		for _, v := range x[i*p : (i+1)*p] {
			s += v
		}
		y[i] = s / T(p)
	}
}

// globalAvgPoolGrad spreads each dy[i] evenly over its p pixels of dx.
func globalAvgPoolGrad[T tensor.Float](p int, dy, dx []T) {
	for i, d := range dy {
		row := dx[i*p : (i+1)*p]
		for j := range row {
			row[j] = d / T(p)
		}
	}
}
