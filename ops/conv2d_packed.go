package ops

import (
	"github.com/plumbml/plumb/internal/conv"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/tensor"
)

// PackedConvWeights is a convolution's constant filter w [O, C/groups,
// KH, KW], in host memory, transformed once into the form the forward
// kernel that conv2d chooses for it reads (internal/conv.Prepare): the
// Winograd-transformed and packed planes of a float32 3×3 stride-1
// convolution, or the channels-last weight matrix of the other ungrouped
// ones. An inference loop over a CNN otherwise redoes that transform at
// every forward pass, as ONNX Runtime avoids by prepacking its
// convolution weights at session creation.
type PackedConvWeights struct {
	w   *tensor.Tensor
	f32 *conv.Prepared[float32]
	f64 *conv.Prepared[float64]
}

// PackConvWeights prepares w [O, C/groups, KH, KW] (float32 or float64,
// host memory) for Conv2DPackedOp with attrs' groups, strides and
// dilations (any batch, image size and padding). The preparation is a
// copy: a later change to w is not seen by forward passes that use it.
func PackConvWeights(w *tensor.Tensor, attrs Conv2DAttrs) (*PackedConvWeights, error) {
	in := []*tensor.Tensor{w}
	if w == nil || w.Rank() != 4 || w.Storage() != nil {
		return nil, Errorf("conv2d", in, "want weights [O, C/groups, KH, KW] in host memory to pack")
	}
	a, err := attrs.norm()
	if err != nil {
		return nil, Errorf("conv2d", in, "%v", err)
	}
	if w.Dim(0)%a.Groups != 0 || min(w.Dim(1), w.Dim(2), w.Dim(3)) < 1 {
		return nil, Errorf("conv2d", in, "with groups %d want O divisible by it and a non-empty kernel", a.Groups)
	}
	g := conv.Geom{N: 1, Cout: w.Dim(0), Groups: a.Groups, Geom: im2col.Geom{
		C: w.Dim(1) * a.Groups, KH: w.Dim(2), KW: w.Dim(3),
		SH: a.Stride[0], SW: a.Stride[1], DH: a.Dilation[0], DW: a.Dilation[1],
	}}
	p := &PackedConvWeights{w: w}
	switch w.DType() {
	case tensor.Float32:
		p.f32 = conv.Prepare(g, w.Float32s())
	case tensor.Float64:
		p.f64 = conv.Prepare(g, w.Float64s())
	default:
		return nil, Errorf("conv2d", in, "want float32 or float64 weights to pack")
	}
	return p, nil
}

// Conv2DPackedOp returns Conv2DOp(attrs) taking its filter from the
// preparation p when the op's w input is the tensor p prepared (the
// results are Conv2DOp's, bit for bit), and running as Conv2DOp
// otherwise. Its backward pass is Conv2DOp's.
func Conv2DPackedOp(attrs Conv2DAttrs, p *PackedConvWeights) Op {
	return &conv2dOp{attrs: attrs, packed: p}
}

// runConvPacked is runConv for conv2d's forward pass, through the
// preparation p when p prepared in[1].
func runConvPacked(g convGeom, dt tensor.DType, in []*tensor.Tensor, p *PackedConvWeights) *tensor.Tensor {
	if p == nil || p.w != in[1] {
		return runConv(g, false, dt, in)
	}
	out := zerosOrEmpty(g.kernel().DataWritesAll(), dt, []int{g.n, g.cout, g.OH, g.OW})
	convPackedInto(g, in, p, out)
	return out
}

// convPackedInto runs conv2d's forward pass through the preparation p,
// which prepared in[1], into out, which must be zeroed unless the kernel
// writes every element.
func convPackedInto(g convGeom, in []*tensor.Tensor, p *PackedConvWeights, out *tensor.Tensor) {
	k := g.kernel()
	var b *tensor.Tensor
	if len(in) == 3 {
		b = in[2]
	}
	switch out.DType() {
	case tensor.Float32:
		conv.ForwardPrepared(k, p.f32, in[0].Float32s(), in[1].Float32s(), floats[float32](b), out.Float32s())
	case tensor.Float64:
		conv.ForwardPrepared(k, p.f64, in[0].Float64s(), in[1].Float64s(), floats[float64](b), out.Float64s())
	}
}
