package ops

import (
	"fmt"

	"github.com/plumbml/plumb/internal/conv"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "conv2d", Inputs: []string{"x", "w", "b"}, Grads: []int{0, 1, 2},
		Make: MakeOp(Conv2DOp), CUDA: DeviceKernel})
}

// PadMode says where a convolution's or pool's padding comes from.
type PadMode uint8

const (
	// PadExplicit uses the attrs' Pad as given; an all-zero Pad is TF's VALID.
	PadExplicit PadMode = iota
	// PadValid is TF's "VALID": no padding (Pad must be zero).
	PadValid
	// PadSame is TF's "SAME": Pad (which must be zero) is computed from the
	// input size at Forward time by SamePadding, so that the output size
	// is ceil(input / stride).
	PadSame
)

func (m PadMode) String() string {
	switch m {
	case PadExplicit:
		return "explicit"
	case PadValid:
		return "valid"
	case PadSame:
		return "same"
	}
	return fmt.Sprintf("PadMode(%d)", uint8(m))
}

// UnmarshalText reads TensorFlow's padding names, as the parity goldens
// write them: "SAME", "VALID", or "EXPLICIT" (or "") for the attrs' Pad.
func (m *PadMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "SAME":
		*m = PadSame
	case "VALID":
		*m = PadValid
	case "EXPLICIT", "":
		*m = PadExplicit
	default:
		return fmt.Errorf("unknown padding %q (want SAME, VALID or EXPLICIT)", b)
	}
	return nil
}

// MarshalText writes TensorFlow's name of the padding.
func (m PadMode) MarshalText() ([]byte, error) {
	switch m {
	case PadSame:
		return []byte("SAME"), nil
	case PadValid:
		return []byte("VALID"), nil
	}
	return []byte("EXPLICIT"), nil
}

// SamePadding returns the per-side padding (top, bottom, left, right) of
// TensorFlow's SAME rule for an inH×inW input and a kH×kW kernel: along each
// axis the output size is out = ceil(in / stride), the total padding is
// max((out−1)·stride + (k−1)·dilation + 1 − in, 0), and the odd pixel goes
// to the bottom or right. All arguments must be positive.
func SamePadding(inH, inW, kH, kW, strideH, strideW, dilH, dilW int) ([4]int, error) {
	if min(inH, inW, kH, kW, strideH, strideW, dilH, dilW) < 1 {
		return [4]int{}, &Error{Op: "SamePadding", Msg: fmt.Sprintf(
			"want positive sizes; got input %dx%d, kernel %dx%d, stride %dx%d, dilation %dx%d",
			inH, inW, kH, kW, strideH, strideW, dilH, dilW)}
	}
	side := func(in, k, s, d int) (int, int) {
		out := (in + s - 1) / s
		total := max((out-1)*s+(k-1)*d+1-in, 0)
		return total / 2, total - total/2
	}
	var p [4]int
	p[0], p[1] = side(inH, kH, strideH, dilH)
	p[2], p[3] = side(inW, kW, strideW, dilW)
	return p, nil
}

// resolvePad returns the padding that mode and pad give an h×w input.
func resolvePad(mode PadMode, pad [4]int, h, w, kh, kw, sh, sw, dh, dw int) ([4]int, error) {
	switch mode {
	case PadExplicit:
		if min(pad[0], pad[1], pad[2], pad[3]) < 0 {
			return pad, fmt.Errorf("negative padding %v (top, bottom, left, right)", pad)
		}
		return pad, nil
	case PadValid, PadSame:
		if pad != [4]int{} {
			return pad, fmt.Errorf("padding mode %v takes no explicit Pad, got %v", mode, pad)
		}
		if mode == PadValid {
			return pad, nil
		}
		return SamePadding(h, w, kh, kw, sh, sw, dh, dw)
	}
	return pad, fmt.Errorf("unknown padding mode %v", mode)
}

// windowsOut returns the output size of sliding an effective kernel of size
// eff at stride s over an input of size in padded by lo and hi, and false
// when the kernel does not fit.
func windowsOut(in, lo, hi, eff, s int) (int, bool) {
	if in+lo+hi < eff {
		return 0, false
	}
	return (in+lo+hi-eff)/s + 1, true
}

// Conv2DAttrs are the attributes of a 2-D convolution. The zero value is a
// stride-1, undilated, unpadded (VALID), ungrouped convolution.
type Conv2DAttrs struct {
	Stride   [2]int  `json:"strides"`   // (height, width); 0 means 1
	Dilation [2]int  `json:"dilations"` // (height, width); 0 means 1
	Pad      [4]int  `json:"pads"`      // zero padding (top, bottom, left, right), with Padding PadExplicit
	Padding  PadMode `json:"padding"`   // where the padding comes from
	Groups   int     `json:"groups"`    // input and output channels split into this many groups; 0 means 1
}

// norm returns a with zero strides, dilations and groups replaced by 1.
func (a Conv2DAttrs) norm() (Conv2DAttrs, error) {
	if min(a.Stride[0], a.Stride[1], a.Dilation[0], a.Dilation[1], a.Groups) < 0 {
		return a, fmt.Errorf("stride %v, dilation %v and groups %d must be positive (0 means 1)", a.Stride, a.Dilation, a.Groups)
	}
	for _, v := range []*int{&a.Stride[0], &a.Stride[1], &a.Dilation[0], &a.Dilation[1], &a.Groups} {
		if *v == 0 {
			*v = 1
		}
	}
	return a, nil
}

// convGeom is a validated convolution y = conv(x, w) over a batch: x is
// [n, C, H, W], w is [cout, C/groups, KH, KW] and y is [n, cout, OH, OW].
// Conv2D computes it forwards; Conv2DTranspose runs it backwards, so its
// own input plays y and its output plays x. kernel hands it to
// internal/conv, which chooses the algorithm.
type convGeom struct {
	im2col.Geom
	n, cout, groups int
}

// convInputs checks the inputs shared by conv2d and conv2d_transpose: x, w
// and an optional b, all of one float dtype, x and w of rank 4. layout
// names the expected weight layout in errors.
func convInputs(op, layout string, in []*tensor.Tensor, a Conv2DAttrs) (tensor.DType, Conv2DAttrs, error) {
	if len(in) != 2 && len(in) != 3 {
		return 0, a, Errorf(op, in, "want inputs x, w and optional b")
	}
	dt, err := checkShapes(op, in, len(in))
	if err != nil {
		return 0, a, err
	}
	if in[0].Rank() != 4 || in[1].Rank() != 4 {
		return 0, a, Errorf(op, in, "want x [N, C, H, W] and w %s", layout)
	}
	a, err = a.norm()
	if err != nil {
		return 0, a, Errorf(op, in, "%v", err)
	}
	if in[1].Dim(2) < 1 || in[1].Dim(3) < 1 {
		return 0, a, Errorf(op, in, "want a kernel of at least 1x1")
	}
	return dt, a, nil
}

// checkBias checks the optional bias in[2] against c output channels.
func checkBias(op string, in []*tensor.Tensor, c int) error {
	if len(in) == 3 && (in[2].Rank() != 1 || in[2].Dim(0) != c) {
		return Errorf(op, in, "want bias [%d]", c)
	}
	return nil
}

type conv2dOp struct {
	attrs  Conv2DAttrs
	packed *PackedConvWeights // w prepared once (Conv2DPackedOp), used when w is the prepared tensor; or nil
	g      convGeom           // saved by Forward
}

// Conv2DOp returns the 2-D convolution (cross-correlation, as every DL
// framework computes it) of x [N, C, H, W] with weights w [O, C/groups,
// KH, KW] plus an optional bias b [O], giving [N, O, OH, OW]: PyTorch's
// torch.nn.functional.conv2d, and tf.nn.conv2d with data_format NCHW and
// the weights transposed from TF's HWIO. With groups G, input channels
// [g·C/G, (g+1)·C/G) feed output channels [g·O/G, (g+1)·O/G); G == C
// is a depthwise convolution. Output sizes are
// (in + pad_before + pad_after − ((k−1)·dilation + 1)) / stride + 1.
//
// The bias is an optional third input, as in linear, so its add rides in
// the output pass and its gradient is a plain sum. Ungrouped convolutions
// with a few channels or more run as tall GEMMs over chunks of images laid
// out channels last (an implicit GEMM at stride 1), depthwise ones as
// direct per-plane loops, and the rest as one im2col GEMM per image and
// group; see internal/conv.
func Conv2DOp(attrs Conv2DAttrs) Op { return &conv2dOp{attrs: attrs} }

// Conv2D returns the convolution of x with w plus b (which may be nil); see Conv2DOp.
func Conv2D(x, w, b *tensor.Tensor, attrs Conv2DAttrs) (*tensor.Tensor, error) {
	return runWithBias(Conv2DOp(attrs), x, w, b)
}

// runWithBias runs op on x, w and b, leaving out b when it is nil.
func runWithBias(op Op, x, w, b *tensor.Tensor) (*tensor.Tensor, error) {
	if b == nil {
		return run(op, x, w)
	}
	return run(op, x, w, b)
}

func (o *conv2dOp) Name() string { return "conv2d" }

// Check is conv2d's device-free check (Checker).
func (o *conv2dOp) Check(in []*tensor.Tensor) error {
	_, _, err := o.geom(in)
	return err
}

func (o *conv2dOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("conv2d", in, len(in)); err != nil {
		return nil, err
	}
	dt, g, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	o.g = g
	return runConvPacked(g, dt, in, o.packed), nil
}

// geom validates the inputs and attributes from their shapes alone and
// returns the convolution's geometry.
func (o *conv2dOp) geom(in []*tensor.Tensor) (tensor.DType, convGeom, error) {
	const op = "conv2d"
	dt, a, err := convInputs(op, "[O, C/groups, KH, KW]", in, o.attrs)
	if err != nil {
		return 0, convGeom{}, err
	}
	x, w := in[0].Shape(), in[1].Shape()
	if x[1]%a.Groups != 0 || w[0]%a.Groups != 0 || w[1]*a.Groups != x[1] {
		return 0, convGeom{}, Errorf(op, in, "with groups %d want C and O divisible by it and w [O, %d, KH, KW]", a.Groups, x[1]/a.Groups)
	}
	g := convGeom{n: x[0], cout: w[0], groups: a.Groups, Geom: im2col.Geom{
		C: x[1], H: x[2], W: x[3], KH: w[2], KW: w[3],
		SH: a.Stride[0], SW: a.Stride[1], DH: a.Dilation[0], DW: a.Dilation[1],
	}}
	pad, err := resolvePad(a.Padding, a.Pad, g.H, g.W, g.KH, g.KW, g.SH, g.SW, g.DH, g.DW)
	if err != nil {
		return 0, convGeom{}, Errorf(op, in, "%v", err)
	}
	g.PT, g.PL = pad[0], pad[2]
	effH, effW := (g.KH-1)*g.DH+1, (g.KW-1)*g.DW+1
	var okH, okW bool
	g.OH, okH = windowsOut(g.H, pad[0], pad[1], effH, g.SH)
	g.OW, okW = windowsOut(g.W, pad[2], pad[3], effW, g.SW)
	if !okH || !okW {
		return 0, convGeom{}, Errorf(op, in, "dilated kernel %dx%d is larger than the padded input %dx%d (padding %v)",
			effH, effW, g.H+pad[0]+pad[1], g.W+pad[2]+pad[3], pad)
	}
	if err := checkBias(op, in, g.cout); err != nil {
		return 0, convGeom{}, err
	}
	return dt, g, nil
}

func (o *conv2dOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	return convBackward(o.g, false, in, gout, need), nil
}

// runConv allocates the output of conv2d, or of conv2d_transpose when
// transposed, and runs its forward pass on the validated inputs.
func runConv(g convGeom, transposed bool, dt tensor.DType, in []*tensor.Tensor) *tensor.Tensor {
	k := g.kernel()
	shape := []int{g.n, g.cout, g.OH, g.OW}
	if transposed {
		shape = []int{g.n, g.C, g.H, g.W}
	}
	full := k.DataWritesAll()
	if transposed {
		full = k.AdjointWritesAll()
	}
	out := zerosOrEmpty(full, dt, shape)
	convInto(k, transposed, in, out)
	return out
}

// convInto runs the convolution k (or its transpose) on validated inputs
// into out, which must be zeroed unless the kernel writes every element.
func convInto(k conv.Geom, transposed bool, in []*tensor.Tensor, out *tensor.Tensor) {
	var b *tensor.Tensor
	if len(in) == 3 {
		b = in[2]
	}
	switch out.DType() {
	case tensor.Float32:
		conv.Forward(k, transposed, in[0].Float32s(), in[1].Float32s(), floats[float32](b), out.Float32s())
	case tensor.Float64:
		conv.Forward(k, transposed, in[0].Float64s(), in[1].Float64s(), floats[float64](b), out.Float64s())
	}
}

// zerosOrEmpty allocates a tensor for a kernel's output: uninitialized
// (tensor.Empty) when full says the kernel writes every element, else
// zeroed for a kernel that adds into it.
func zerosOrEmpty(full bool, dt tensor.DType, shape []int) *tensor.Tensor {
	if full {
		return tensor.Empty(dt, shape...)
	}
	return tensor.Zeros(dt, shape...)
}

// kernel is g as internal/conv's algorithms take it.
func (g convGeom) kernel() conv.Geom {
	return conv.Geom{Geom: g.Geom, N: g.n, Cout: g.cout, Groups: g.groups}
}

// convBackward returns the gradients of conv2d, or of conv2d_transpose when
// transposed, for the inputs that need them: conv.Backward writes dx and
// adds into dw and db, so only a dx it writes whole is left unzeroed.
func convBackward(g convGeom, transposed bool, in []*tensor.Tensor, gout *tensor.Tensor, need []bool) []*tensor.Tensor {
	k := g.kernel()
	full := k.AdjointWritesAll()
	if transposed {
		full = k.DataWritesAll()
	}
	grads := make([]*tensor.Tensor, len(in))
	for i, t := range in {
		if need[i] {
			grads[i] = zerosOrEmpty(i == 0 && full, t.DType(), t.Shape())
		}
	}
	var gb *tensor.Tensor
	if len(in) == 3 {
		gb = grads[2]
	}
	switch gout.DType() {
	case tensor.Float32:
		conv.Backward(k, transposed, in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](gb))
	case tensor.Float64:
		conv.Backward(k, transposed, in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](gb))
	}
	return grads
}
