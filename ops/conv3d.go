package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "conv3d", Inputs: []string{"x", "w", "b"}, Grads: []int{0, 1, 2},
		Make: MakeOp(Conv3DOp), CUDA: DeviceFallback})
}

// Conv3DAttrs are the attributes of a 3-D convolution; the axes are
// (depth, height, width) throughout, and the JSON names of the per-axis
// ones end in _dhw, apart from conv2d's two-axis ones. The zero value is a
// stride-1, undilated, unpadded (VALID), ungrouped convolution.
type Conv3DAttrs struct {
	Stride   [3]int  `json:"strides_dhw"`   // 0 means 1
	Dilation [3]int  `json:"dilations_dhw"` // 0 means 1
	Pad      [6]int  `json:"pads_dhw"`      // zero padding (front, back, top, bottom, left, right), with Padding PadExplicit
	Padding  PadMode `json:"padding"`       // where the padding comes from; SAME per axis as TF
	Groups   int     `json:"groups"`        // input and output channels split into this many groups; 0 means 1
}

// conv3dGeom is a validated 3-D convolution: per-axis input, kernel,
// stride, dilation, leading padding and output sizes, and the channels.
type conv3dGeom struct {
	n, cin, cout, groups int
	in, k, s, d, lo, out [3]int
}

// cols is the rows of one group's lowered input: C/groups·KD·KH·KW.
func (g conv3dGeom) cols() int { return g.cin / g.groups * g.k[0] * g.k[1] * g.k[2] }

// outPlane and inPlane are the cells of one output and one input channel.
func (g conv3dGeom) outPlane() int { return g.out[0] * g.out[1] * g.out[2] }
func (g conv3dGeom) inPlane() int  { return g.in[0] * g.in[1] * g.in[2] }

type conv3dOp struct {
	attrs Conv3DAttrs
	g     conv3dGeom // saved by Forward for Backward
}

// Conv3DOp returns the 3-D convolution (cross-correlation, as in every
// framework) of x [N, C, D, H, W] with w [O, C/groups, KD, KH, KW] plus
// the optional bias b [O], giving [N, O, OD, OH, OW] with
// OD = (D + pad_front + pad_back − ((KD−1)·dilation + 1)) / stride + 1
// (likewise OH, OW): ONNX Conv over three spatial axes, and
// tf.nn.conv3d with data_format NCDHW and an OIDHW filter. Each group of
// C/groups input channels feeds its O/groups output channels. It lowers
// each image and group to a [C/groups·KD·KH·KW, OD·OH·OW] matrix (the 3-D
// im2col) and multiplies by the GEMM; the gradients are the transposed
// products, the input's scattered back (col2im).
func Conv3DOp(attrs Conv3DAttrs) Op { return &conv3dOp{attrs: attrs} }

// Conv3D returns the 3-D convolution of x with w and the optional bias b
// (nil for none); see Conv3DOp.
func Conv3D(x, w, b *tensor.Tensor, attrs Conv3DAttrs) (*tensor.Tensor, error) {
	if b == nil {
		return run(Conv3DOp(attrs), x, w)
	}
	return run(Conv3DOp(attrs), x, w, b)
}

func (o *conv3dOp) Name() string { return "conv3d" }

func (o *conv3dOp) Attrs() any { return o.attrs }

// geom validates the inputs and attributes.
func (o *conv3dOp) geom(in []*tensor.Tensor) (tensor.DType, conv3dGeom, error) {
	const op = "conv3d"
	var g conv3dGeom
	if len(in) != 2 && len(in) != 3 {
		return 0, g, Errorf(op, in, "want inputs x, w and an optional bias, got %d", len(in))
	}
	dt, err := checkShapes(op, in, len(in))
	if err != nil {
		return 0, g, err
	}
	x, w := in[0], in[1]
	if x.Rank() != 5 || w.Rank() != 5 {
		return 0, g, Errorf(op, in, "want x [N, C, D, H, W] and w [O, C/groups, KD, KH, KW]")
	}
	a := o.attrs
	if min(a.Stride[0], a.Stride[1], a.Stride[2], a.Dilation[0], a.Dilation[1], a.Dilation[2], a.Groups) < 0 {
		return 0, g, Errorf(op, in, "strides %v, dilations %v and groups %d must be positive (0 means 1)", a.Stride, a.Dilation, a.Groups)
	}
	g.n, g.cin, g.cout, g.groups = x.Dim(0), x.Dim(1), w.Dim(0), max(a.Groups, 1)
	if g.cin%g.groups != 0 || g.cout%g.groups != 0 || w.Dim(1)*g.groups != g.cin {
		return 0, g, Errorf(op, in, "groups %d must divide the input channels %d and output channels %d, and w's dim 1 must be C/groups = %d",
			g.groups, g.cin, g.cout, g.cin/g.groups)
	}
	if min(w.Dim(2), w.Dim(3), w.Dim(4)) < 1 {
		return 0, g, Errorf(op, in, "want a kernel of at least one tap per axis")
	}
	var pad [6]int
	switch a.Padding {
	case PadExplicit:
		if min(a.Pad[0], a.Pad[1], a.Pad[2], a.Pad[3], a.Pad[4], a.Pad[5]) < 0 {
			return 0, g, Errorf(op, in, "negative padding %v (front, back, top, bottom, left, right)", a.Pad)
		}
		pad = a.Pad
	case PadValid, PadSame:
		if a.Pad != [6]int{} {
			return 0, g, Errorf(op, in, "padding mode %v takes no explicit Pad, got %v", a.Padding, a.Pad)
		}
	default:
		return 0, g, Errorf(op, in, "unknown padding mode %v", a.Padding)
	}
	for i := range 3 {
		g.in[i], g.k[i], g.s[i], g.d[i] = x.Dim(2+i), w.Dim(2+i), max(a.Stride[i], 1), max(a.Dilation[i], 1)
		if a.Padding == PadSame {
			pad[2*i], pad[2*i+1] = samePadAxis(g.in[i], g.k[i], g.s[i], g.d[i])
		}
		g.lo[i] = pad[2*i]
		eff := (g.k[i]-1)*g.d[i] + 1
		var ok bool
		if g.out[i], ok = windowsOut(g.in[i], pad[2*i], pad[2*i+1], eff, g.s[i]); !ok {
			return 0, g, Errorf(op, in, "dilated kernel %d along axis %d is larger than the padded input %d (padding %v)",
				eff, 2+i, g.in[i]+pad[2*i]+pad[2*i+1], pad)
		}
	}
	if err := checkBias(op, in, g.cout); err != nil {
		return 0, g, err
	}
	return dt, g, nil
}

// Check is conv3d's device-free check (Checker).
func (o *conv3dOp) Check(in []*tensor.Tensor) error {
	_, _, err := o.geom(in)
	return err
}

func (o *conv3dOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 2 && len(in) != 3 {
		return nil, Errorf(o.Name(), in, "want inputs x, w and an optional bias, got %d", len(in))
	}
	if err := checkArity(o.Name(), in, len(in)); err != nil {
		return nil, err
	}
	dt, g, err := o.geom(in)
	if err != nil {
		return nil, err
	}
	o.g = g
	out := tensor.Empty(dt, g.n, g.cout, g.out[0], g.out[1], g.out[2])
	var b *tensor.Tensor
	if len(in) == 3 {
		b = in[2]
	}
	if dt == tensor.Float32 {
		conv3dForward(g, in[0].Float32s(), in[1].Float32s(), floats[float32](b), out.Float32s())
	} else {
		conv3dForward(g, in[0].Float64s(), in[1].Float64s(), floats[float64](b), out.Float64s())
	}
	return out, nil
}

func (o *conv3dOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g := o.g
	if len(in) < 2 || len(need) < len(in) || in[0] == nil || in[1] == nil || gout == nil ||
		in[0].Size() != g.n*g.cin*g.inPlane() || gout.Size() != g.n*g.cout*g.outPlane() || gout.DType() != in[0].DType() {
		return nil, Errorf(o.Name(), in, "Backward takes the inputs of this op's Forward and a gradient of its output's shape")
	}
	grads := wantedGrads(in, need)
	if in[0].DType() == tensor.Float32 {
		conv3dBackward(g, in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]))
	} else {
		conv3dBackward(g, in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]))
	}
	if len(in) == 3 && need[2] {
		po := g.outPlane()
		for i := range g.n * g.cout {
			c := i % g.cout
			s := 0.0
			for j := range po {
				s += gout.At(i*po + j)
			}
			grads[2].SetAt(c, grads[2].At(c)+s)
		}
	}
	return grads, nil
}

// vol2col lowers one image's group of channels x (C/groups of them) into
// col [C/groups·KD·KH·KW, OD·OH·OW]: row (c, kd, kh, kw), column
// (od, oh, ow) holds x[c, od·s−lo+kd·d, ...], or 0 in the padding. With
// back it is col2vol, the transpose: col is added into x instead.
func vol2col[T tensor.Float](g conv3dGeom, x, col []T, back bool) {
	cg, p := g.cin/g.groups, g.outPlane()
	r := 0
	for c := range cg {
		xc := x[c*g.inPlane() : (c+1)*g.inPlane()]
		for kd := range g.k[0] {
			for kh := range g.k[1] {
				for kw := range g.k[2] {
					row := col[r*p : (r+1)*p]
					conv3dTaps(g, kd, kh, kw, func(j, at int) {
						switch {
						case back && at >= 0:
							xc[at] += row[j]
						case back:
						case at < 0:
							row[j] = 0
						default:
							row[j] = xc[at]
						}
					})
					r++
				}
			}
		}
	}
}

// conv3dTaps calls fn for every output cell j of tap (kd, kh, kw) with the
// flat input offset the tap reads there, or −1 in the padding.
func conv3dTaps(g conv3dGeom, kd, kh, kw int, fn func(j, at int)) {
	j := 0
	for od := range g.out[0] {
		id := od*g.s[0] - g.lo[0] + kd*g.d[0]
		for oh := range g.out[1] {
			ih := oh*g.s[1] - g.lo[1] + kh*g.d[1]
			for ow := range g.out[2] {
				iw := ow*g.s[2] - g.lo[2] + kw*g.d[2]
				at := -1
				if id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2] {
					at = (id*g.in[1]+ih)*g.in[2] + iw
				}
				fn(j, at)
				j++
			}
		}
	}
}

// conv3dForward computes y = w·vol2col(x) + b per image and group.
func conv3dForward[T tensor.Float](g conv3dGeom, x, w, b, y []T) {
	k, p := g.cols(), g.outPlane()
	cg, og := g.cin/g.groups, g.cout/g.groups
	col := getScratch[T](k * p)
	for n := range g.n {
		for gr := range g.groups {
			xg := x[(n*g.cin+gr*cg)*g.inPlane():][:cg*g.inPlane()]
			yg := y[(n*g.cout+gr*og)*p:][:og*p]
			vol2col(g, xg, *col, false)
			gemm.Gemm(false, false, og, p, k, 1, w[gr*og*k:][:og*k], k, *col, p, 0, yg, p)
			for o := range og {
				if b == nil {
					break
				}
				row := yg[o*p : (o+1)*p]
				for j := range row {
					row[j] += b[gr*og+o]
				}
			}
		}
	}
	putScratch(col)
}

// conv3dBackward adds the gradients of x (dx, when non-nil) and of w (dw,
// when non-nil) for the upstream gradient dy: dw += dy·colᵀ, and
// dx += col2vol(wᵀ·dy) (vol2col with back), per image and group.
func conv3dBackward[T tensor.Float](g conv3dGeom, x, w, dy, dx, dw []T) {
	k, p := g.cols(), g.outPlane()
	cg, og := g.cin/g.groups, g.cout/g.groups
	col := getScratch[T](k * p)
	for n := range g.n {
		for gr := range g.groups {
			dyg := dy[(n*g.cout+gr*og)*p:][:og*p]
			if dw != nil {
				vol2col(g, x[(n*g.cin+gr*cg)*g.inPlane():][:cg*g.inPlane()], *col, false)
				gemm.Gemm(false, true, og, k, p, 1, dyg, p, *col, p, 1, dw[gr*og*k:][:og*k], k)
			}
			if dx != nil {
				gemm.Gemm(true, false, k, p, og, 1, w[gr*og*k:][:og*k], k, dyg, p, 0, *col, p)
				vol2col(g, dx[(n*g.cin+gr*cg)*g.inPlane():][:cg*g.inPlane()], *col, true)
			}
		}
	}
	putScratch(col)
}
