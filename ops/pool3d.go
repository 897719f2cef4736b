package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "max_pool3d", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(MaxPool3DOp), CUDA: DeviceFallback})
	register(Spec{Name: "avg_pool3d", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(AvgPool3DOp), CUDA: DeviceFallback})
}

// Pool3DAttrs are the attributes of a 3-D max or average pool over
// x [N, C, D, H, W]; the axes are (depth, height, width) throughout. Their
// JSON names end in _dhw, apart from the 2-D pools' two-axis ones.
type Pool3DAttrs struct {
	Kernel   [3]int  `json:"kernel_dhw"`    // window; all required
	Stride   [3]int  `json:"strides_dhw"`   // 0 means the window size
	Dilation [3]int  `json:"dilations_dhw"` // spacing of the window's taps; 0 means 1
	Pad      [6]int  `json:"pads_dhw"`      // (front, back, top, bottom, left, right), with Padding PadExplicit
	Padding  PadMode `json:"padding"`       // where the padding comes from; SAME per axis as TF
	// CeilMode rounds the output size up (ONNX ceil_mode); see
	// pool_window.go.
	CeilMode bool `json:"ceil_mode"`
	// CountIncludePad makes the average divide by the window's taps inside
	// the padded input (ONNX count_include_pad); average pool only.
	CountIncludePad bool `json:"count_include_pad"`
}

type pool3dOp struct {
	max   bool
	attrs Pool3DAttrs
	win   *poolWindows // saved by Forward for Backward
}

// MaxPool3DOp returns the 3-D max pool of x [N, C, D, H, W], giving
// [N, C, OD, OH, OW]: tf.nn.max_pool3d with data_format NCDHW, and with
// Dilation or CeilMode ONNX MaxPool over three spatial axes (output sizes
// in pool_window.go). Padded cells never win; the gradient goes to the
// first maximum of each window in (depth, row, column) order.
func MaxPool3DOp(attrs Pool3DAttrs) Op { return &pool3dOp{max: true, attrs: attrs} }

// AvgPool3DOp returns the 3-D average pool of x [N, C, D, H, W], shaped as
// MaxPool3DOp's: tf.nn.avg_pool3d with data_format NCDHW (padded cells
// left out of the divisor), and ONNX AveragePool with Dilation, CeilMode or
// CountIncludePad.
func AvgPool3DOp(attrs Pool3DAttrs) Op { return &pool3dOp{attrs: attrs} }

// MaxPool3D returns the 3-D max pool of x; see MaxPool3DOp.
func MaxPool3D(x *tensor.Tensor, attrs Pool3DAttrs) (*tensor.Tensor, error) {
	return run(MaxPool3DOp(attrs), x)
}

// AvgPool3D returns the 3-D average pool of x; see AvgPool3DOp.
func AvgPool3D(x *tensor.Tensor, attrs Pool3DAttrs) (*tensor.Tensor, error) {
	return run(AvgPool3DOp(attrs), x)
}

func (o *pool3dOp) Name() string {
	if o.max {
		return "max_pool3d"
	}
	return "avg_pool3d"
}

func (o *pool3dOp) Attrs() any { return o.attrs }

// windows validates x and the attributes and returns the pool's windows.
func (o *pool3dOp) windows(in []*tensor.Tensor) (*poolWindows, error) {
	op, a := o.Name(), o.attrs
	if _, err := checkShapes(op, in, 1); err != nil {
		return nil, err
	}
	if in[0].Rank() != 5 {
		return nil, Errorf(op, in, "want x [N, C, D, H, W]")
	}
	if min(a.Kernel[0], a.Kernel[1], a.Kernel[2]) < 1 || min(a.Stride[0], a.Stride[1], a.Stride[2]) < 0 ||
		min(a.Dilation[0], a.Dilation[1], a.Dilation[2]) < 0 {
		return nil, Errorf(op, in, "want a positive kernel and non-negative strides and dilations (0 means the kernel and 1), got kernel %v, stride %v, dilation %v",
			a.Kernel, a.Stride, a.Dilation)
	}
	if a.CountIncludePad && o.max {
		return nil, Errorf(op, in, "count_include_pad applies to the average pool only")
	}
	x := in[0].Shape()
	var pad [6]int
	switch a.Padding {
	case PadExplicit:
		if min(a.Pad[0], a.Pad[1], a.Pad[2], a.Pad[3], a.Pad[4], a.Pad[5]) < 0 {
			return nil, Errorf(op, in, "negative padding %v (front, back, top, bottom, left, right)", a.Pad)
		}
		pad = a.Pad
	case PadValid, PadSame:
		if a.Pad != [6]int{} {
			return nil, Errorf(op, in, "padding mode %v takes no explicit Pad, got %v", a.Padding, a.Pad)
		}
	default:
		return nil, Errorf(op, in, "unknown padding mode %v", a.Padding)
	}
	p := &poolWindows{planes: x[0] * x[1], max: o.max, inclPad: a.CountIncludePad}
	for i, name := range []string{"depth", "height", "width"} {
		k, s, d := a.Kernel[i], a.Stride[i], max(a.Dilation[i], 1)
		if s == 0 {
			s = k
		}
		if a.Padding == PadSame {
			pad[2*i], pad[2*i+1] = samePadAxis(x[2+i], k, s, d)
		}
		var err error
		if p.ax[i], err = newPoolAxis(x[2+i], k, s, d, pad[2*i], pad[2*i+1], a.CeilMode); err != nil {
			return nil, Errorf(op, in, "%s: %v (kernel %v, stride %v, dilation %v, padding %v)", name, err, a.Kernel, a.Stride, a.Dilation, pad)
		}
	}
	return p, nil
}

// Check is the 3-D pools' device-free check (Checker): x [N, C, D, H, W],
// the window, strides, dilations and padding.
func (o *pool3dOp) Check(in []*tensor.Tensor) error {
	_, err := o.windows(in)
	return err
}

func (o *pool3dOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity(o.Name(), in, 1); err != nil {
		return nil, err
	}
	p, err := o.windows(in)
	if err != nil {
		return nil, err
	}
	o.win = p
	x := in[0].Shape()
	return runPoolWindows(p, in[0], []int{x[0], x[1], p.ax[0].out, p.ax[1].out, p.ax[2].out}), nil
}

func (o *pool3dOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if !need[0] {
		return []*tensor.Tensor{nil}, nil
	}
	if o.win == nil || len(in) != 1 || in[0] == nil || gout == nil || in[0].Size() != o.win.planes*o.win.inPlane() ||
		gout.Size() != o.win.planes*o.win.outPlane() || gout.DType() != in[0].DType() {
		return nil, Errorf(o.Name(), in, "Backward takes the x of this op's Forward and a gradient of its output's shape")
	}
	return []*tensor.Tensor{gradPoolWindows(o.win, in[0], gout)}, nil
}
