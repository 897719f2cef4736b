package ops

import (
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "conv2d_transpose", Inputs: []string{"x", "w", "b"}, Grads: []int{0, 1, 2},
		Make: MakeOp(Conv2DTransposeOp), CUDA: DeviceKernel})
}

// Conv2DTransposeAttrs are the attributes of a transposed convolution. The
// embedded Conv2DAttrs describe the convolution whose input gradient this
// op computes: its stride, dilation, groups and padding of the (larger)
// output. OutputPadding adds rows and columns at the bottom and right of
// the output to pick among the output sizes that convolution maps to the
// same input size; each must be below its stride (as TF and Keras require).
type Conv2DTransposeAttrs struct {
	Conv2DAttrs
	OutputPadding [2]int `json:"output_padding"` // (height, width)
}

type conv2dTransposeOp struct {
	attrs Conv2DTransposeAttrs
	g     convGeom // the forward convolution, saved by Forward
}

// Conv2DTransposeOp returns the transposed convolution ("deconvolution") of
// x [N, C, H, W] with weights w [C, O/groups, KH, KW] plus an optional bias
// b [O], giving [N, O, OH, OW]: the gradient of conv2d with respect to its
// input, as PyTorch's torch.nn.functional.conv_transpose2d (whose weight
// layout this is) and tf.nn.conv2d_transpose. w is the weight of that
// conv2d, which maps [N, O, OH, OW] back to [N, C, H, W].
//
// With explicit or VALID padding, OH = (H−1)·stride − pad_top − pad_bottom
// + (KH−1)·dilation + 1 + output_padding, and likewise OW (PyTorch's rule).
// With SAME padding, OH = H·stride and OW = W·stride (TF's and Keras's
// rule), the padding is SamePadding of that output, and OutputPadding must
// be zero.
func Conv2DTransposeOp(attrs Conv2DTransposeAttrs) Op { return &conv2dTransposeOp{attrs: attrs} }

// Conv2DTranspose returns the transposed convolution of x with w plus b
// (which may be nil); see Conv2DTransposeOp.
func Conv2DTranspose(x, w, b *tensor.Tensor, attrs Conv2DTransposeAttrs) (*tensor.Tensor, error) {
	return runWithBias(Conv2DTransposeOp(attrs), x, w, b)
}

func (o *conv2dTransposeOp) Name() string { return "conv2d_transpose" }

// Check is conv2d_transpose's device-free check (Checker).
func (o *conv2dTransposeOp) Check(in []*tensor.Tensor) error {
	_, _, err := o.geom(in)
	return err
}

func (o *conv2dTransposeOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("conv2d_transpose", in, len(in)); err != nil {
		return nil, err
	}
	dt, g, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	o.g = g
	return runConv(g, true, dt, in), nil
}

// geom validates the inputs and attributes from their shapes alone and
// returns the convolution's geometry.
func (o *conv2dTransposeOp) geom(in []*tensor.Tensor) (tensor.DType, convGeom, error) {
	const op = "conv2d_transpose"
	dt, a, err := convInputs(op, "[C, O/groups, KH, KW]", in, o.attrs.Conv2DAttrs)
	if err != nil {
		return 0, convGeom{}, err
	}
	x, w, opad := in[0].Shape(), in[1].Shape(), o.attrs.OutputPadding
	if w[0] != x[1] || w[0]%a.Groups != 0 {
		return 0, convGeom{}, Errorf(op, in, "with groups %d want w [C=%d, O/groups, KH, KW] and C divisible by groups", a.Groups, x[1])
	}
	if opad[0] < 0 || opad[1] < 0 || opad[0] >= a.Stride[0] || opad[1] >= a.Stride[1] {
		return 0, convGeom{}, Errorf(op, in, "output padding %v must be non-negative and below the stride %v", opad, a.Stride)
	}
	g := convGeom{n: x[0], cout: x[1], groups: a.Groups, Geom: im2col.Geom{
		C: w[1] * a.Groups, KH: w[2], KW: w[3], OH: x[2], OW: x[3],
		SH: a.Stride[0], SW: a.Stride[1], DH: a.Dilation[0], DW: a.Dilation[1],
	}}
	if a.Padding == PadSame {
		if opad != [2]int{} {
			return 0, convGeom{}, Errorf(op, in, "SAME padding takes no output padding, got %v", opad)
		}
		g.H, g.W = g.OH*g.SH, g.OW*g.SW
	}
	pad, err := resolvePad(a.Padding, a.Pad, g.H, g.W, g.KH, g.KW, g.SH, g.SW, g.DH, g.DW)
	if err != nil {
		return 0, convGeom{}, Errorf(op, in, "%v", err)
	}
	if a.Padding != PadSame {
		g.H = (g.OH-1)*g.SH - pad[0] - pad[1] + (g.KH-1)*g.DH + 1 + opad[0]
		g.W = (g.OW-1)*g.SW - pad[2] - pad[3] + (g.KW-1)*g.DW + 1 + opad[1]
		if g.OH < 1 || g.OW < 1 || g.H < 1 || g.W < 1 {
			return 0, convGeom{}, Errorf(op, in, "padding %v leaves an empty output %dx%d", pad, g.H, g.W)
		}
	}
	g.PT, g.PL = pad[0], pad[2]
	if err := checkBias(op, in, g.C); err != nil {
		return 0, convGeom{}, err
	}
	return dt, g, nil
}

func (o *conv2dTransposeOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	return convBackward(o.g, true, in, gout, need), nil
}
