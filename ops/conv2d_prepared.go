package ops

import (
	"github.com/plumbml/plumb/internal/conv"
	"github.com/plumbml/plumb/tensor"
)

// PreparedConv is a conv2d's weights w, in host memory, laid out once for
// the forward algorithm of one input geometry (conv.Prepare): Winograd's
// transformed filters packed for the GEMM, or the channels-last kernels'
// reordered weights, which each forward pass otherwise remakes. An
// inference plan prepares its convolutions at compile time, as ONNX
// Runtime and oneDNN reorder weights once. The layout is a copy: a later
// change to w is not seen by the ops that read it.
type PreparedConv struct {
	w   *tensor.Tensor
	g   conv.Geom
	f32 *conv.Prepared[float32]
	f64 *conv.Prepared[float64]
}

// PrepareConv2D lays out w for conv2d with attrs on inputs of x's shape
// (any batch size). It returns nil and no error when that convolution's
// algorithm reads the weights as given (im2col, depthwise), and an error
// naming the shapes when they do not fit.
func PrepareConv2D(attrs Conv2DAttrs, x, w *tensor.Tensor) (*PreparedConv, error) {
	in := []*tensor.Tensor{x, w}
	if err := checkArity("conv2d", in, 2); err != nil {
		return nil, err
	}
	dt, g, err := (&conv2dOp{attrs: attrs}).geom(in)
	if err != nil {
		return nil, err
	}
	p := &PreparedConv{w: w, g: g.kernel()}
	switch dt {
	case tensor.Float32:
		p.f32 = conv.Prepare(p.g, w.Float32s())
	case tensor.Float64:
		p.f64 = conv.Prepare(p.g, w.Float64s())
	}
	if p.f32 == nil && p.f64 == nil {
		return nil, nil
	}
	return p, nil
}

// Conv2DPreparedOp returns Conv2DOp(attrs) that reads p's layout when its
// w input is the tensor p prepared and the input's geometry is the one p
// was prepared for (any batch size), and runs as Conv2DOp otherwise; the
// results are Conv2DOp's.
func Conv2DPreparedOp(attrs Conv2DAttrs, p *PreparedConv) Op {
	return &conv2dOp{attrs: attrs, prep: p}
}

// serves reports whether p is the layout of in's weights for geometry g.
func (p *PreparedConv) serves(g convGeom, in []*tensor.Tensor) bool {
	if p == nil || in[1] != p.w {
		return false
	}
	if in[1].DType() == tensor.Float32 {
		return p.f32.Fits(g.kernel())
	}
	return p.f64.Fits(g.kernel())
}

// forward runs the prepared convolution of geometry g, which p serves, on
// validated inputs into out.
func (p *PreparedConv) forward(g convGeom, in []*tensor.Tensor, out *tensor.Tensor) {
	k := g.kernel()
	var b *tensor.Tensor
	if len(in) == 3 {
		b = in[2]
	}
	switch out.DType() {
	case tensor.Float32:
		p.f32.Forward(k, in[0].Float32s(), floats[float32](b), out.Float32s())
	case tensor.Float64:
		p.f64.Forward(k, in[0].Float64s(), floats[float64](b), out.Float64s())
	}
}
