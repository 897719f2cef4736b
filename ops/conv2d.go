package ops

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "conv2d", Inputs: []string{"x", "w", "b"}, Grads: []int{0, 1, 2}})
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
	Stride   [2]int  // (height, width); 0 means 1
	Dilation [2]int  // (height, width); 0 means 1
	Pad      [4]int  // zero padding (top, bottom, left, right), with Padding PadExplicit
	Padding  PadMode // where the padding comes from
	Groups   int     // input and output channels split into this many groups; 0 means 1
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
// own input plays y and its output plays x.
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
	dt, err := checkFloat(op, in, len(in))
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
	attrs Conv2DAttrs
	g     convGeom // saved by Forward
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
// group; see convData.
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

func (o *conv2dOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	const op = "conv2d"
	dt, a, err := convInputs(op, "[O, C/groups, KH, KW]", in, o.attrs)
	if err != nil {
		return nil, err
	}
	x, w := in[0].Shape(), in[1].Shape()
	if x[1]%a.Groups != 0 || w[0]%a.Groups != 0 || w[1]*a.Groups != x[1] {
		return nil, Errorf(op, in, "with groups %d want C and O divisible by it and w [O, %d, KH, KW]", a.Groups, x[1]/a.Groups)
	}
	g := convGeom{n: x[0], cout: w[0], groups: a.Groups, Geom: im2col.Geom{
		C: x[1], H: x[2], W: x[3], KH: w[2], KW: w[3],
		SH: a.Stride[0], SW: a.Stride[1], DH: a.Dilation[0], DW: a.Dilation[1],
	}}
	pad, err := resolvePad(a.Padding, a.Pad, g.H, g.W, g.KH, g.KW, g.SH, g.SW, g.DH, g.DW)
	if err != nil {
		return nil, Errorf(op, in, "%v", err)
	}
	g.PT, g.PL = pad[0], pad[2]
	effH, effW := (g.KH-1)*g.DH+1, (g.KW-1)*g.DW+1
	var okH, okW bool
	g.OH, okH = windowsOut(g.H, pad[0], pad[1], effH, g.SH)
	g.OW, okW = windowsOut(g.W, pad[2], pad[3], effW, g.SW)
	if !okH || !okW {
		return nil, Errorf(op, in, "dilated kernel %dx%d is larger than the padded input %dx%d (padding %v)",
			effH, effW, g.H+pad[0]+pad[1], g.W+pad[2]+pad[3], pad)
	}
	if err := checkBias(op, in, g.cout); err != nil {
		return nil, err
	}
	o.g = g
	return runConv(g, false, dt, in), nil
}

func (o *conv2dOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	return convBackward(o.g, false, in, gout, need), nil
}

// runConv allocates the output of conv2d, or of conv2d_transpose when
// transposed, and runs its forward pass on the validated inputs.
func runConv(g convGeom, transposed bool, dt tensor.DType, in []*tensor.Tensor) *tensor.Tensor {
	shape := []int{g.n, g.cout, g.OH, g.OW}
	if transposed {
		shape = []int{g.n, g.C, g.H, g.W}
	}
	full := g.dataWritesAll()
	if transposed {
		full = g.adjointWritesAll()
	}
	out := zerosOrEmpty(full, dt, shape)
	var b *tensor.Tensor
	if len(in) == 3 {
		b = in[2]
	}
	switch dt {
	case tensor.Float32:
		convForward(g, transposed, in[0].Float32s(), in[1].Float32s(), floats[float32](b), out.Float32s())
	case tensor.Float64:
		convForward(g, transposed, in[0].Float64s(), in[1].Float64s(), floats[float64](b), out.Float64s())
	}
	return out
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

// dataWritesAll reports whether convData writes every element of its
// output rather than adding into a zeroed one: the channels-last kernels
// write it (rowsConvolve's layout change) and so do the im2col ones (each
// image's and group's product has beta 0); the depthwise ones add tap by
// tap.
func (g convGeom) dataWritesAll() bool { return !g.depthwise() }

// adjointWritesAll reports whether the data gradient (convDataAdjoint,
// rowsBackward, gridBackward) writes every element of x: the channels-last
// kernels do when they run it as a convolution of dy, or when the padded
// window covers all of x so that Unpad's writes reach every cell (a VALID
// convolution whose windows stop short of the last rows leaves those rows
// to the zeroing).
func (g convGeom) adjointWritesAll() bool {
	covers := g.PT >= 0 && g.PL >= 0 && g.PaddedH() >= g.H+g.PT && g.PaddedW() >= g.W+g.PL
	return g.rowsPay() && (g.adjointAsConv() || covers)
}

// convForward computes y = conv(x, w) + b, or convᵀ(x, w) + b when
// transposed, into y, zeroed unless dataWritesAll (adjointWritesAll when
// transposed) says the kernel writes all of it; b may be nil.
func convForward[T tensor.Float](g convGeom, transposed bool, x, w, b, y []T) {
	if transposed {
		convDataAdjoint(g, x, w, b, y)
		return
	}
	convData(g, x, w, b, y)
}

// convBackward returns the gradients of conv2d, or of conv2d_transpose when
// transposed, for the inputs that need them.
func convBackward(g convGeom, transposed bool, in []*tensor.Tensor, gout *tensor.Tensor, need []bool) []*tensor.Tensor {
	full := g.adjointWritesAll()
	if transposed {
		full = g.dataWritesAll()
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
		convGrad(g, transposed, in[0].Float32s(), in[1].Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](gb))
	case tensor.Float64:
		convGrad(g, transposed, in[0].Float64s(), in[1].Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](gb))
	}
	return grads
}

// convGrad adds into dw and db and writes dx (each nil when unwanted), all
// zeroed but dx where adjointWritesAll (dataWritesAll when transposed).
// For y = conv(x, w) + b: dx = convᵀ(dy, w), dw = the filter gradient of x
// and dy, db = Σ_{images, pixels} dy. For y = convᵀ(x, w) + b the roles
// swap: dx = conv(dy, w) and dw is the filter gradient with dy as the
// convolution's input and x as its output gradient.
func convGrad[T tensor.Float](g convGeom, transposed bool, x, w, dy, dx, dw, db []T) {
	c, p := g.cout, g.Cols()
	if transposed {
		c, p = g.C, g.H*g.W
	}
	if !transposed && dx != nil && dw != nil && (g.sharedGrid() || g.sharedRows()) {
		if g.sharedGrid() {
			gridBackward(g, x, w, dy, dx, dw, db)
		} else {
			rowsBackward(g, x, w, dy, dx, dw, db)
		}
		dx, dw, db = nil, nil, nil
	}
	if dx != nil {
		if transposed {
			convData(g, dy, w, nil, dx)
		} else {
			convDataAdjoint(g, dy, w, nil, dx)
		}
	}
	if dw != nil {
		if transposed {
			convFilter(g, dy, x, dw)
		} else {
			convFilter(g, x, dy, dw)
		}
	}
	if db != nil {
		biasGrad(dy, db, g.n, c, p)
	}
}

// The three convolution kernels, shared by conv2d and conv2d_transpose.
// Ungrouped convolutions with enough channels take the channels-last
// kernels (rowsData, rowsDataAdjoint, rowsFilter), depthwise ones direct
// per-plane loops, and the rest the per-image im2col GEMMs below.
// With og output and kg = C/groups·KH·KW lowered input rows per group and
// p = OH·OW pixels, image i and group k compute
//
//	convData:         y[i,k] (og×p)  = w[k] (og×kg) · im2col(x[i])[k] (kg×p)
//	convDataAdjoint:  x[i]          += col2im(w[k]ᵀ (kg×og) · y[i,k] (og×p))
//	convFilter:       dw[k] (og×kg) += y[i,k] (og×p) · im2col(x[i])[k]ᵀ (p×kg)

// convData writes y = conv(x, w) + b into y, zeroed unless dataWritesAll;
// b [cout] may be nil.
func convData[T tensor.Float](g convGeom, x, w, b, y []T) {
	if g.rowsPay() {
		rowsData(g, x, w, b, y)
		return
	}
	if g.depthwise() {
		depthwiseData(g, x, w, y)
	} else {
		im2colData(g, x, w, y)
	}
	if b != nil {
		addBias(y, b, g.n, g.cout, g.Cols())
	}
}

// convDataAdjoint writes x = convᵀ(y, w) + b, the adjoint of convData in x
// plus a bias b [C] that may be nil, into x, zeroed unless
// adjointWritesAll.
func convDataAdjoint[T tensor.Float](g convGeom, y, w, b, x []T) {
	if g.rowsPay() {
		rowsDataAdjoint(g, y, w, b, x)
		return
	}
	if g.depthwise() {
		depthwiseDataAdjoint(g, y, w, x)
	} else {
		im2colDataAdjoint(g, y, w, x)
	}
	if b != nil {
		addBias(x, b, g.n, g.C, g.H*g.W)
	}
}

// convFilter adds the gradient of <y, conv(x, w)> in w into dw.
func convFilter[T tensor.Float](g convGeom, x, y, dw []T) {
	if g.rowsPay() {
		rowsFilter(g, x, y, dw)
		return
	}
	if g.depthwise() {
		depthwiseFilter(g, x, y, dw)
		return
	}
	im2colFilter(g, x, y, dw)
}

// im2colData is convData for any groups, one GEMM per image and group.
func im2colData[T tensor.Float](g convGeom, x, w, y []T) {
	og, kg, p, chw := g.cout/g.groups, g.Rows()/g.groups, g.Cols(), g.C*g.H*g.W
	forBatch(g.n, func(_, lo, hi int) {
		buf := getScratch[T](g.Rows() * p)
		defer putScratch(buf)
		col := *buf
		for i := lo; i < hi; i++ {
			im2col.Im2Col(g.Geom, x[i*chw:], col)
			for k := 0; k < g.groups; k++ {
				gemm.Gemm(false, false, og, p, kg, 1, w[k*og*kg:], kg, col[k*kg*p:], p, 0, y[(i*g.cout+k*og)*p:], p)
			}
		}
	})
}

// im2colDataAdjoint is convDataAdjoint for any groups.
func im2colDataAdjoint[T tensor.Float](g convGeom, y, w, x []T) {
	og, kg, p, chw := g.cout/g.groups, g.Rows()/g.groups, g.Cols(), g.C*g.H*g.W
	forBatch(g.n, func(_, lo, hi int) {
		buf := getScratch[T](g.Rows() * p)
		defer putScratch(buf)
		col := *buf
		for i := lo; i < hi; i++ {
			for k := 0; k < g.groups; k++ {
				gemm.Gemm(true, false, kg, p, og, 1, w[k*og*kg:], kg, y[(i*g.cout+k*og)*p:], p, 0, col[k*kg*p:], p)
			}
			im2col.Col2Im(g.Geom, col, x[i*chw:(i+1)*chw])
		}
	})
}

// im2colFilter is convFilter for any groups. Each goroutine sums its
// images into a buffer of its own (pooled), added at the end.
func im2colFilter[T tensor.Float](g convGeom, x, y, dw []T) {
	og, kg, p, chw := g.cout/g.groups, g.Rows()/g.groups, g.Cols(), g.C*g.H*g.W
	part := make([]*[]T, batchWorkers(g.n))
	forBatch(g.n, func(worker, lo, hi int) {
		acc := dw
		if worker > 0 {
			part[worker] = getScratch[T](len(dw))
			acc = *part[worker]
			clear(acc)
		}
		buf := getScratch[T](g.Rows() * p)
		defer putScratch(buf)
		col := *buf
		for i := lo; i < hi; i++ {
			im2col.Im2Col(g.Geom, x[i*chw:], col)
			for k := 0; k < g.groups; k++ {
				gemm.Gemm(false, true, og, kg, p, 1, y[(i*g.cout+k*og)*p:], p, col[k*kg*p:], p, 1, acc[k*og*kg:], kg)
			}
		}
	})
	for _, acc := range part[1:] {
		for j, v := range *acc {
			dw[j] += v
		}
		putScratch(acc)
	}
}

// The ungrouped kernels lower images channels last, one row per output
// pixel (im2col.Im2Row), the layout of cuDNN's and oneDNN's GEMM
// convolutions and of Caffe2's NHWC im2col. With K = KH·KW·C taps, p
// pixels per image and W read as O×K with taps ordered (i, j, c), a chunk
// of images computes
//
//	rowsData:         yᵀ (imgs·p × O) = rows(x) (imgs·p × K) · Wᵀ
//	rowsFilter:       dWᵀ (K × O)    += rows(x)ᵀ (K × imgs·p) · dyᵀ (imgs·p × O)
//	rowsDataAdjoint:  stride 1 (adjointAsConv): dx = conv(dy, W turned 180°,
//	                  channels swapped); else rows(dx) (imgs·p × K) = dyᵀ · W,
//	                  added back by Row2Im
//
// so each is one tall GEMM per chunk whose narrow side (O, or C for the data
// gradient) fills the micro-kernel's NR columns, instead of a GEMM O rows
// tall per image, and the filter gradient sums a whole chunk in its K. The
// weights enter as op(B) = Wᵀ, which GEMM packs into panels once per call.
//
// The batch is split over the cores once (forBatch), and each core takes
// its images through every stage, chunk by chunk (pad, GEMM, layout
// change), with serial GEMMs (coreGemm) and chunks sized to its own L2
// (chunkElems); the filter gradient is summed per core and the sums added
// in core order. Cutting each GEMM over the cores instead ran the ResNet-32
// layers at 1.0-1.3 times their one-core speed here: every product and
// every layout pass woke the other core and waited for it, tens of
// microseconds each time on this virtual machine, and the data crossed
// between the cores' caches at each stage. Taps run (i, j, c) so that a row is KH contiguous
// runs of the padded channels-last image. At stride 1 the row matrix is
// not built at all (gridPays: the implicit GEMM below), and when the output
// is the input's size one grid of dy serves both gradients (sharedGrid).
// The layout changes between NCHW and channels last are im2col.Transpose's
// 8×8 register transposes.

// rowsPay reports whether the channels-last kernels take g: ungrouped, with
// KW·C and KW·O (the runs their lowering copies, forward and backward) of
// at least 16 values. Below that (MNIST's one-channel first layer) the
// copies are too short to repay, and im2col's runs of whole output rows
// win.
func (g convGeom) rowsPay() bool { return g.groups == 1 && g.KW*min(g.C, g.cout) >= 16 }

// gridPays reports whether the implicit GEMM takes g: stride 1, runs of
// KW·C ≥ 32 so each of its GEMMs has a useful K, and at most 30% of its
// grid cells wasted beyond the OH×OW outputs (13% on a 32×32 3×3 SAME
// layer, 125% on MNIST's 12×12 5×5 VALID one).
func gridPays(g im2col.Geom) bool {
	return g.SH == 1 && g.SW == 1 && g.KW*g.C >= 32 && 10*g.PaddedH()*g.PaddedW() <= 13*g.OH*g.OW
}

// chunkElems bounds the elements of a chunk's scratch (row matrix or grid,
// and the GEMM's output), 256 KiB of float32, so that it stays in the
// core's L2 between the lowering that writes it, the GEMM and the layout
// change that read it.
const chunkElems = 1 << 16

// chunkImages is how many images go into one chunk when each takes per
// elements of scratch.
func chunkImages(n, per int) int { return max(1, min(n, chunkElems/max(per, 1))) }

// gemmFunc is the signature of gemm.Gemm and gemm.Serial.
type gemmFunc[T tensor.Float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// coreGemm returns the GEMM a kernel calls inside forBatch over n images:
// gemm.Serial when every core has images of its own, gemm.Gemm when there
// are fewer images than cores (batch-1 inference), so that those products
// still use every core.
func coreGemm[T tensor.Float](n int) gemmFunc[T] {
	if batchWorkers(n) < runtime.GOMAXPROCS(0) {
		return gemm.Gemm[T]
	}
	return gemm.Serial[T]
}

// coreSums gives each of forBatch's workers over n images a zeroed pooled
// buffer of size elements for its partial sums (of a filter or bias
// gradient); addFilter and addTo add them up in worker order, so the sum
// does not depend on timing, and return them to the pool.
type coreSums[T tensor.Float] []*[]T

func newCoreSums[T tensor.Float](n, size int) coreSums[T] {
	s := make(coreSums[T], batchWorkers(n))
	for i := range s {
		s[i] = getScratch[T](size)
		clear(*s[i])
	}
	return s
}

// addFilter adds partial filter gradients wt [(i·KW+j)·C+c, o] into dw.
func (s coreSums[T]) addFilter(g convGeom, dw []T) {
	for _, wt := range s {
		addFilter(g, *wt, dw)
		putScratch(wt)
	}
}

// addTo adds the partial sums into dst.
func (s coreSums[T]) addTo(dst []T) {
	for _, part := range s {
		vec.Add(dst, *part)
		putScratch(part)
	}
}

// rowWeights writes w [O, C, KH, KW] with its taps ordered (i, j, c), wr
// [o, (i·KW+j)·C+c] = w[o, c, i, j]; flipped, it writes the weights of the
// data gradient as a convolution of dy instead, C outputs from O inputs
// with the kernel turned by 180°: wr [c, (i·KW+j)·O+o] = w[o, c, KH−1−i,
// KW−1−j].
func rowWeights[T tensor.Float](g convGeom, w, wr []T, flipped bool) {
	kk := g.KH * g.KW
	for o := 0; o < g.cout; o++ {
		for c := 0; c < g.C; c++ {
			src := w[(o*g.C+c)*kk : (o*g.C+c+1)*kk]
			for t, v := range src {
				if flipped {
					wr[(c*kk+kk-1-t)*g.cout+o] = v
				} else {
					wr[(o*kk+t)*g.C+c] = v
				}
			}
		}
	}
}

// rowsConvolve writes y = conv(x, w) + b for n images x [C, H, W] (geometry
// g) into y [nout, OH, OW], w [nout, K] from rowWeights; b may be nil.
func rowsConvolve[T tensor.Float](g im2col.Geom, n, nout int, x, w, b, y []T) {
	if gridPays(g) {
		gridConvolve(g, n, nout, x, w, b, y)
		return
	}
	k, p, chw := g.Rows(), g.Cols(), g.C*g.H*g.W
	nb, mul := chunkImages(n, p*(k+nout)), coreGemm[T](n)
	forBatch(n, func(_, lo, hi int) {
		rb, ob, xb := getScratch[T](nb*p*k), getScratch[T](nb*p*nout), getScratch[T](g.PaddedLen())
		defer putScratch(rb)
		defer putScratch(ob)
		defer putScratch(xb)
		rows, out, xp := *rb, *ob, *xb
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			for i := range m {
				im2col.Pad(g, x[(i0+i)*chw:], xp)
				im2col.Im2Row(g, xp, rows[i*p*k:(i+1)*p*k])
			}
			mul(false, true, m*p, nout, k, 1, rows, k, w, k, 0, out, nout)
			for i := range m {
				yi := y[(i0+i)*nout*p : (i0+i+1)*nout*p]
				im2col.Transpose(yi, p, out[i*p*nout:], nout, p, nout, false)
				if b != nil {
					addBias(yi, b, 1, nout, p)
				}
			}
		}
	})
}

// rowsData writes y = conv(x, w) + b for an ungrouped convolution.
func rowsData[T tensor.Float](g convGeom, x, w, b, y []T) {
	wb := getScratch[T](len(w))
	defer putScratch(wb)
	rowWeights(g, w, *wb, false)
	rowsConvolve(g.Geom, g.n, g.cout, x, *wb, b, y)
}

// adjointAsConv reports whether rowsDataAdjoint runs the data gradient as
// a convolution of dy: at stride 1, when the input has at most 30% more
// pixels than the output. That convolution multiplies H·W·K·O times where
// the forward pass does OH·OW·K·O, the rest against dy's zero border
// (2.25 times the work on MNIST's 12×12 5×5 VALID layer).
func (g convGeom) adjointAsConv() bool {
	return g.SH == 1 && g.SW == 1 && 10*g.H*g.W <= 13*g.OH*g.OW
}

// adjoint is the geometry of the data gradient of a stride-1 convolution
// as a convolution of dy (see rowsDataAdjoint).
func (g convGeom) adjoint() im2col.Geom {
	return im2col.Geom{C: g.cout, H: g.OH, W: g.OW, KH: g.KH, KW: g.KW, SH: 1, SW: 1, DH: g.DH, DW: g.DW,
		PT: (g.KH-1)*g.DH - g.PT, PL: (g.KW-1)*g.DW - g.PL, OH: g.H, OW: g.W}
}

// rowsDataAdjoint writes dx = convᵀ(dy, w) + b for an ungrouped
// convolution. At stride 1 that is itself a convolution (taken when
// adjointAsConv): dx[c, h, w] =
// Σ dy[o, h+PT−i·DH, w+PL−j·DW]·w[o, c, i, j], the kernel turned by 180°
// over a window that starts (KH−1)·DH−PT rows above dy (a negative start
// crops). Otherwise dy is multiplied out to rows and added back by Row2Im.
func rowsDataAdjoint[T tensor.Float](g convGeom, dy, w, b, dx []T) {
	wb := getScratch[T](len(w))
	defer putScratch(wb)
	wr := *wb
	if g.adjointAsConv() {
		rowWeights(g, w, wr, true)
		rowsConvolve(g.adjoint(), g.n, g.C, dy, wr, b, dx)
		return
	}
	rowWeights(g, w, wr, false)
	k, p, chw := g.Rows(), g.Cols(), g.C*g.H*g.W
	nb, mul := chunkImages(g.n, p*(k+g.cout)), coreGemm[T](g.n)
	forBatch(g.n, func(_, lo, hi int) {
		rb, tb, xb := getScratch[T](nb*p*k), getScratch[T](nb*p*g.cout), getScratch[T](g.PaddedLen())
		defer putScratch(rb)
		defer putScratch(tb)
		defer putScratch(xb)
		rows, dyT, xp := *rb, *tb, *xb
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			for i := range m {
				im2col.Transpose(dyT[i*p*g.cout:], g.cout, dy[(i0+i)*g.cout*p:], p, g.cout, p, false)
			}
			mul(false, false, m*p, k, g.cout, 1, dyT, g.cout, wr, k, 0, rows, k)
			for i := range m {
				clear(xp)
				im2col.Row2Im(g.Geom, rows[i*p*k:(i+1)*p*k], xp)
				dxi := dx[(i0+i)*chw : (i0+i+1)*chw]
				im2col.Unpad(g.Geom, xp, dxi, false) // write: one value per covered cell, the rest zeroed
				if b != nil {
					addBias(dxi, b, 1, g.C, g.H*g.W)
				}
			}
		}
	})
}

// rowsFilter adds the filter gradient of an ungrouped convolution with
// input x and output gradient dy into dw, summing every image of a chunk in
// one GEMM.
func rowsFilter[T tensor.Float](g convGeom, x, dy, dw []T) {
	if gridPays(g.Geom) {
		gridFilter(g, x, dy, dw)
		return
	}
	rowsBackward(g, x, nil, dy, nil, dw, nil)
}

// sharedRows reports whether rowsBackward takes both gradients of g: the
// filter gradient and the data gradient both go through row matrices
// (not the implicit GEMM, and not the data gradient as a convolution).
func (g convGeom) sharedRows() bool {
	return g.rowsPay() && !gridPays(g.Geom) && !g.adjointAsConv()
}

// rowsBackward writes the data gradient of a convolution that sharedRows
// takes into dx (zeroed unless adjointWritesAll), adds its filter
// gradient into dw and, when db is non-nil, its bias gradient into db
// (biasSums). Per chunk, x is lowered to rows and dy laid out channels
// last once for both GEMMs: the filter gradient reads the rows, then the
// data gradient's GEMM overwrites them with dyᵀ·W, which Row2Im adds back
// into dx. With dx nil (and w unused) it
// takes the filter gradient alone, as rowsFilter.
func rowsBackward[T tensor.Float](g convGeom, x, w, dy, dx, dw, db []T) {
	var wr []T
	if dx != nil {
		wb := getScratch[T](len(w))
		defer putScratch(wb)
		wr = *wb
		rowWeights(g, w, wr, false)
	}
	k, p, chw := g.Rows(), g.Cols(), g.C*g.H*g.W
	nb, mul := chunkImages(g.n, p*(k+g.cout)), coreGemm[T](g.n)
	sums := newCoreSums[T](g.n, k*g.cout)
	var bsums coreSums[T]
	if db != nil {
		bsums = newCoreSums[T](g.n, g.cout)
	}
	forBatch(g.n, func(worker, lo, hi int) {
		rb, tb, xb := getScratch[T](nb*p*k), getScratch[T](nb*p*g.cout), getScratch[T](g.PaddedLen())
		defer putScratch(rb)
		defer putScratch(tb)
		defer putScratch(xb)
		rows, dyT, xp, wt := *rb, *tb, *xb, *sums[worker]
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			for i := range m {
				im2col.Pad(g.Geom, x[(i0+i)*chw:], xp)
				im2col.Im2Row(g.Geom, xp, rows[i*p*k:(i+1)*p*k])
				dyi := dy[(i0+i)*g.cout*p:][:g.cout*p]
				im2col.Transpose(dyT[i*p*g.cout:], g.cout, dyi, p, g.cout, p, false)
				if db != nil {
					biasSums(dyi, *bsums[worker], p)
				}
			}
			mul(true, false, k, g.cout, m*p, 1, rows, k, dyT, g.cout, 1, wt, g.cout)
			if dx == nil {
				continue
			}
			mul(false, false, m*p, k, g.cout, 1, dyT, g.cout, wr, k, 0, rows, k)
			for i := range m {
				clear(xp)
				im2col.Row2Im(g.Geom, rows[i*p*k:(i+1)*p*k], xp)
				im2col.Unpad(g.Geom, xp, dx[(i0+i)*chw:(i0+i+1)*chw], false) // write: one value per covered cell, the rest zeroed
			}
		}
	})
	sums.addFilter(g, dw)
	bsums.addTo(db)
}

// addFilter adds wt [(i·KW+j)·C+c, o] into dw [o, c, i, j].
func addFilter[T tensor.Float](g convGeom, wt, dw []T) {
	kk := g.KH * g.KW
	for o := 0; o < g.cout; o++ {
		for c := 0; c < g.C; c++ {
			dst := dw[(o*g.C+c)*kk : (o*g.C+c+1)*kk]
			for t := range dst {
				dst[t] += wt[(t*g.C+c)*g.cout+o]
			}
		}
	}
}

// At stride 1 the rows need not be built at all (implicit GEMM, as in
// cuDNN's IMPLICIT_GEMM algorithm and Chetlur et al., "cuDNN: Efficient
// Primitives for Deep Learning", 2014): pad a chunk of images into
// consecutive channels-last windows, a grid of cells C values each, and
// compute one output per grid cell, the window's top-left corner. The
// inputs of tap (i, j) for every cell then form a matrix whose row q
// starts at cell q + i·DH·PaddedW + j·DW: the grid itself, offset, with
// row stride C. With DW = 1 the taps of one kernel row are contiguous, so
// the product is KH GEMMs with K = KW·C, each reading the grid in place
// (its rows overlap, which a strided read does not mind). The cells past
// a window's OH×OW corner compute values that are dropped (forward) or
// meet zero gradients (filter), some (PaddedH·PaddedW)/(OH·OW) − 1 extra
// work; 13% on a 32×32 image with a 3×3 kernel.

// gridTaps calls fn(off, col, k) for each GEMM of an implicit product: its
// input matrix starts off elements into the grid, its taps are the k
// columns of w from col on.
func gridTaps(g im2col.Geom, fn func(off, col, k int)) {
	pw := g.PaddedW()
	if g.DW == 1 {
		for i := 0; i < g.KH; i++ {
			fn(i*g.DH*pw*g.C, i*g.KW*g.C, g.KW*g.C)
		}
		return
	}
	for i := 0; i < g.KH; i++ {
		for j := 0; j < g.KW; j++ {
			fn((i*g.DH*pw+j*g.DW)*g.C, (i*g.KW+j)*g.C, g.C)
		}
	}
}

// gridChunk returns how many images a chunk of the implicit kernels holds
// when each output cell carries nout values, and the grid buffer's length
// for it: the windows plus the tail the last cells' taps read past them.
func gridChunk(g im2col.Geom, n, nout int) (nb, gridLen int) {
	cells := g.PaddedH() * g.PaddedW()
	nb = chunkImages(n, cells*(g.C+nout))
	tail := ((g.KH-1)*g.DH*g.PaddedW() + (g.KW-1)*g.DW) * g.C
	return nb, nb*cells*g.C + tail
}

// padChunk writes images [i0, i0+m) of x into grid as consecutive padded
// windows, zeroes the rest of grid (the tail) and returns the cell count.
func padChunk[T tensor.Float](g im2col.Geom, x []T, i0, m int, grid []T) int {
	win, chw := g.PaddedLen(), g.C*g.H*g.W
	for i := range m {
		im2col.Pad(g, x[(i0+i)*chw:], grid[i*win:(i+1)*win])
	}
	clear(grid[m*win:])
	return m * g.PaddedH() * g.PaddedW()
}

// gridConvolve is rowsConvolve at stride 1, as an implicit GEMM.
func gridConvolve[T tensor.Float](g im2col.Geom, n, nout int, x, w, b, y []T) {
	k, p, ph, pw := g.Rows(), g.Cols(), g.PaddedH(), g.PaddedW()
	nb, gridLen := gridChunk(g, n, nout)
	mul := coreGemm[T](n)
	forBatch(n, func(_, lo, hi int) {
		gb, ob := getScratch[T](gridLen), getScratch[T](nb*ph*pw*nout)
		defer putScratch(gb)
		defer putScratch(ob)
		grid, out := *gb, *ob
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			cells := padChunk(g, x, i0, m, grid)
			beta := T(0)
			gridTaps(g, func(off, col, kt int) {
				mul(false, true, cells, nout, kt, 1, grid[off:], g.C, w[col:], k, beta, out, nout)
				beta = 1
			})
			for i := range m {
				yi := y[(i0+i)*nout*p : (i0+i+1)*nout*p]
				for oh := 0; oh < g.OH; oh++ {
					im2col.Transpose(yi[oh*g.OW:], p, out[(i*ph+oh)*pw*nout:], nout, g.OW, nout, false)
				}
				if b != nil {
					addBias(yi, b, 1, nout, p)
				}
			}
		}
	})
}

// spreadDy writes dy [cout, OH, OW] channels last into e [PaddedH,
// PaddedW, cout] at cells (oh, ow), zero elsewhere.
func spreadDy[T tensor.Float](g convGeom, dy, e []T) {
	p, pw := g.Cols(), g.PaddedW()
	clear(e)
	for oh := 0; oh < g.OH; oh++ {
		im2col.Transpose(e[oh*pw*g.cout:], g.cout, dy[oh*g.OW:], p, g.cout, g.OW, false)
	}
}

// gridFilter is rowsFilter at stride 1, as an implicit GEMM: dy is
// spread over the grid's cells, zero on the dropped ones.
func gridFilter[T tensor.Float](g convGeom, x, dy, dw []T) {
	k, p, cells := g.Rows(), g.Cols(), g.PaddedH()*g.PaddedW()
	nb, gridLen := gridChunk(g.Geom, g.n, g.cout)
	mul := coreGemm[T](g.n)
	sums := newCoreSums[T](g.n, k*g.cout)
	forBatch(g.n, func(worker, lo, hi int) {
		gb, eb := getScratch[T](gridLen), getScratch[T](nb*cells*g.cout)
		defer putScratch(gb)
		defer putScratch(eb)
		grid, dyg, wt := *gb, *eb, *sums[worker]
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			q := padChunk(g.Geom, x, i0, m, grid)
			for i := range m {
				spreadDy(g, dy[(i0+i)*g.cout*p:], dyg[i*cells*g.cout:(i+1)*cells*g.cout])
			}
			gridTaps(g.Geom, func(off, col, kt int) {
				mul(true, false, kt, g.cout, q, 1, grid[off:], g.C, dyg, g.cout, 1, wt[col*g.cout:], g.cout)
			})
		}
	})
	sums.addFilter(g, dw)
}

// depthwise reports whether g is a depthwise convolution: groups > 1, each
// of one input channel (TF's depthwise_conv2d with channel multiplier
// cout/C, when the weights are [C·mult, 1, KH, KW]).
func (g convGeom) depthwise() bool { return g.groups > 1 && g.groups == g.C }

// The depthwise kernels convolve each plane directly. Per group the GEMM
// of the im2col kernels is mult×p×KH·KW with mult (the channel
// multiplier) usually 1: a matrix-vector product of nine taps, all
// overhead. Here each tap (i, j) of each plane is one axpy (a dot product
// for the filter gradient) between the window of outputs whose input lies
// inside the image and the input it reads (dwTap), so the lowering and
// the padding cost nothing; at column stride 1 each runs as one call of
// vec's AVX row loops. Images are spread over the cores.

// dwTap is the window of outputs whose tap (i, j) input lies inside the
// image: rows [r0, r1) and columns [c0, c1), output (oh, ow) reading
// input (oh·SH + ro, ow·SW + co).
type dwTap struct{ r0, r1, c0, c1, ro, co int }

// dwTaps returns each tap's window, taps in (i, j) order.
func dwTaps(g convGeom) []dwTap {
	taps := make([]dwTap, 0, g.KH*g.KW)
	for i := 0; i < g.KH; i++ {
		ro := i*g.DH - g.PT
		r0, r1 := dwSpan(g.H, g.OH, g.SH, ro)
		for j := 0; j < g.KW; j++ {
			co := j*g.DW - g.PL
			c0, c1 := dwSpan(g.W, g.OW, g.SW, co)
			taps = append(taps, dwTap{r0, r1, c0, c1, ro, co})
		}
	}
	return taps
}

// dwSpan returns the outputs [lo, hi) of out whose input o·s + off lies
// in [0, in).
func dwSpan(in, out, s, off int) (lo, hi int) {
	if off < 0 {
		lo = (-off + s - 1) / s
	}
	if in-off > 0 {
		hi = min((in-off-1)/s+1, out)
	}
	return min(lo, hi), hi
}

// dwWindows calls fn for every (image, output channel) plane of images
// [lo, hi) and every tap t whose window is not empty, with yw and xw at
// the window's first output and the input it reads, rows×cols in size;
// output rows lie OW apart in yw and their input rows SH·W apart in xw.
// o indexes the channel's taps in w and dw, at o·KH·KW + t.
func dwWindows[T tensor.Float](g convGeom, taps []dwTap, lo, hi int, x, y []T, fn func(o, t int, yw, xw []T, rows, cols int)) {
	mult, plane, p := g.cout/g.C, g.H*g.W, g.Cols()
	for n := lo; n < hi; n++ {
		for o := 0; o < g.cout; o++ {
			xc, yo := x[(n*g.C+o/mult)*plane:][:plane], y[(n*g.cout+o)*p:][:p]
			for t, tp := range taps {
				if rows, cols := tp.r1-tp.r0, tp.c1-tp.c0; rows > 0 && cols > 0 {
					fn(o, t, yo[tp.r0*g.OW+tp.c0:], xc[(tp.r0*g.SH+tp.ro)*g.W+tp.c0*g.SW+tp.co:], rows, cols)
				}
			}
		}
	}
}

// depthwiseData writes y = conv(x, w) into the zeroed y.
func depthwiseData[T tensor.Float](g convGeom, x, w, y []T) {
	if g.SW != 1 {
		depthwiseDataStrided(g, x, w, y)
		return
	}
	taps, kk := dwTaps(g), g.KH*g.KW
	forBatch(g.n, func(_, lo, hi int) {
		dwWindows(g, taps, lo, hi, x, y, func(o, t int, yw, xw []T, rows, cols int) {
			vec.AxpyRows(yw, g.OW, xw, g.SH*g.W, rows, cols, w[o*kk+t])
		})
	})
}

// depthwiseDataAdjoint adds convᵀ(y, w) into x.
func depthwiseDataAdjoint[T tensor.Float](g convGeom, y, w, x []T) {
	if g.SW != 1 {
		depthwiseDataAdjointStrided(g, y, w, x)
		return
	}
	taps, kk := dwTaps(g), g.KH*g.KW
	forBatch(g.n, func(_, lo, hi int) {
		dwWindows(g, taps, lo, hi, x, y, func(o, t int, yw, xw []T, rows, cols int) {
			vec.AxpyRows(xw, g.SH*g.W, yw, g.OW, rows, cols, w[o*kk+t]) // x rows, W or more apart, do not overlap
		})
	})
}

// depthwiseFilter adds the filter gradient of <y, conv(x, w)> into dw,
// each run of images summing into a pooled buffer of its own, added in
// run order.
func depthwiseFilter[T tensor.Float](g convGeom, x, y, dw []T) {
	if g.SW != 1 {
		depthwiseFilterStrided(g, x, y, dw)
		return
	}
	taps, kk := dwTaps(g), g.KH*g.KW
	sums := newCoreSums[T](g.n, len(dw))
	forBatch(g.n, func(worker, lo, hi int) {
		acc := *sums[worker]
		dwWindows(g, taps, lo, hi, x, y, func(o, t int, yw, xw []T, rows, cols int) {
			acc[o*kk+t] += vec.DotRows(yw, g.OW, xw, g.SH*g.W, rows, cols)
		})
	})
	sums.addTo(dw)
}

// dwCol is the run of output columns [lo, hi) that tap column j reads
// inside the image, from input column lo·SW + off on.
type dwCol struct{ lo, hi, off int }

// dwCols returns each tap column's run.
func dwCols(g convGeom) []dwCol {
	cols := make([]dwCol, g.KW)
	for j := range cols {
		off := j*g.DW - g.PL
		lo, hi := dwSpan(g.W, g.OW, g.SW, off)
		cols[j] = dwCol{lo, hi, off}
	}
	return cols
}

// dwRows calls fn(oh, i, ih) for every output row oh and tap row i whose
// input row ih lies inside the image.
func dwRows(g convGeom, fn func(oh, i, ih int)) {
	for oh := 0; oh < g.OH; oh++ {
		for i := 0; i < g.KH; i++ {
			if ih := oh*g.SH - g.PT + i*g.DH; ih >= 0 && ih < g.H {
				fn(oh, i, ih)
			}
		}
	}
}

// depthwiseDataStrided is depthwiseData at a column stride above 1.
func depthwiseDataStrided[T tensor.Float](g convGeom, x, w, y []T) {
	cols, mult, kk, plane, p := dwCols(g), g.cout/g.C, g.KH*g.KW, g.H*g.W, g.Cols()
	forBatch(g.n, func(_, lo, hi int) {
		for n := lo; n < hi; n++ {
			for o := 0; o < g.cout; o++ {
				xc := x[(n*g.C+o/mult)*plane:][:plane]
				yo, wo := y[(n*g.cout+o)*p:][:p], w[o*kk:][:kk]
				dwRows(g, func(oh, i, ih int) {
					xr, yr := xc[ih*g.W:][:g.W], yo[oh*g.OW:][:g.OW]
					for j, c := range cols {
						wv := wo[i*g.KW+j]
						for t, ix := c.lo, c.lo*g.SW+c.off; t < c.hi; t, ix = t+1, ix+g.SW {
							yr[t] += wv * xr[ix]
						}
					}
				})
			}
		}
	})
}

// depthwiseDataAdjointStrided is depthwiseDataAdjoint at a column stride
// above 1.
func depthwiseDataAdjointStrided[T tensor.Float](g convGeom, y, w, x []T) {
	cols, mult, kk, plane, p := dwCols(g), g.cout/g.C, g.KH*g.KW, g.H*g.W, g.Cols()
	forBatch(g.n, func(_, lo, hi int) {
		for n := lo; n < hi; n++ {
			for o := 0; o < g.cout; o++ {
				xc := x[(n*g.C+o/mult)*plane:][:plane]
				yo, wo := y[(n*g.cout+o)*p:][:p], w[o*kk:][:kk]
				dwRows(g, func(oh, i, ih int) {
					xr, yr := xc[ih*g.W:][:g.W], yo[oh*g.OW:][:g.OW]
					for j, c := range cols {
						wv := wo[i*g.KW+j]
						for t, ix := c.lo, c.lo*g.SW+c.off; t < c.hi; t, ix = t+1, ix+g.SW {
							xr[ix] += wv * yr[t]
						}
					}
				})
			}
		}
	})
}

// depthwiseFilterStrided is depthwiseFilter at a column stride above 1.
func depthwiseFilterStrided[T tensor.Float](g convGeom, x, y, dw []T) {
	cols, mult, kk, plane, p := dwCols(g), g.cout/g.C, g.KH*g.KW, g.H*g.W, g.Cols()
	sums := newCoreSums[T](g.n, len(dw))
	forBatch(g.n, func(worker, lo, hi int) {
		acc := *sums[worker]
		for n := lo; n < hi; n++ {
			for o := 0; o < g.cout; o++ {
				xc := x[(n*g.C+o/mult)*plane:][:plane]
				yo, ao := y[(n*g.cout+o)*p:][:p], acc[o*kk:][:kk]
				dwRows(g, func(oh, i, ih int) {
					xr, yr := xc[ih*g.W:][:g.W], yo[oh*g.OW:][:g.OW]
					for j, c := range cols {
						var s T
						for t, ix := c.lo, c.lo*g.SW+c.off; t < c.hi; t, ix = t+1, ix+g.SW {
							s += yr[t] * xr[ix]
						}
						ao[i*g.KW+j] += s
					}
				})
			}
		}
	})
	sums.addTo(dw)
}

// sharedGrid reports whether gridBackward takes both gradients of g: the
// implicit GEMM pays for the filter gradient and for the data gradient as
// a convolution, and the output is the input's size (stride 1, padding
// (KH−1)·DH rows and (KW−1)·DW columns in all, as SAME gives), so the two
// grids have one width and dy sits in both at a fixed distance.
func (g convGeom) sharedGrid() bool {
	return g.rowsPay() && g.OH == g.H && g.OW == g.W && gridPays(g.Geom) && gridPays(g.adjoint())
}

// gridBackward writes the data gradient of a convolution that sharedGrid
// takes into dx (written whole, so it need not be zeroed), adds its
// filter gradient into dw and, when db is non-nil, its bias gradient into
// db, spreading dy over a grid once for both GEMMs and summing each image
// of dy for db (biasSums). The filter gradient's grid holds dy[o, oh, ow]
// at cell (oh, ow) of x's padded window, zero elsewhere; the data
// gradient's grid (the window of adjoint) holds it at cell (oh+PT', ow+PL')
// of a window as wide and as tall, PT' = (KH−1)·DH − PT and PL' alike. So
// both read one buffer: the data gradient's grid from its start, the
// filter gradient's from PT'·PaddedW + PL' cells in, where the wrapped
// cells of the data gradient's grid land on the zero cells of the other.
func gridBackward[T tensor.Float](g convGeom, x, w, dy, dx, dw, db []T) {
	back := g.adjoint()
	k, p, ph, pw := g.Rows(), g.Cols(), g.PaddedH(), g.PaddedW()
	shift := back.PT*pw + back.PL
	reach := (g.KH-1)*g.DH*pw + (g.KW-1)*g.DW // cells the last taps read past the grid
	cells := ph * pw
	nb, mul := chunkImages(g.n, cells*(2*g.C+g.cout)), coreGemm[T](g.n)
	fb := getScratch[T](k * g.cout)
	defer putScratch(fb)
	wflip := *fb
	rowWeights(g, w, wflip, true)
	sums := newCoreSums[T](g.n, k*g.cout)
	var bsums coreSums[T] // per-worker bias sums
	if db != nil {
		bsums = newCoreSums[T](g.n, g.cout)
	}
	forBatch(g.n, func(worker, lo, hi int) {
		gb, eb, ob := getScratch[T](nb*cells*g.C+reach*g.C), getScratch[T]((nb*cells+reach)*g.cout), getScratch[T](nb*cells*g.C)
		defer putScratch(gb)
		defer putScratch(eb)
		defer putScratch(ob)
		grid, dyg, out, wt := *gb, *eb, *ob, *sums[worker]
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			q := padChunk(g.Geom, x, i0, m, grid)
			clear(dyg[:shift*g.cout])
			for i := range m {
				dyi := dy[(i0+i)*g.cout*p:][:g.cout*p]
				spreadDy(g, dyi, dyg[(shift+i*cells)*g.cout:(shift+(i+1)*cells)*g.cout])
				if db != nil {
					biasSums(dyi, *bsums[worker], p)
				}
			}
			clear(dyg[(shift+q)*g.cout : (q+reach)*g.cout])
			gridTaps(g.Geom, func(off, col, kt int) {
				mul(true, false, kt, g.cout, q, 1, grid[off:], g.C, dyg[shift*g.cout:], g.cout, 1, wt[col*g.cout:], g.cout)
			})
			beta := T(0)
			gridTaps(back, func(off, col, kt int) {
				mul(false, true, q, g.C, kt, 1, dyg[off:], g.cout, wflip[col:], back.Rows(), beta, out, g.C)
				beta = 1
			})
			for i := range m {
				dxi := dx[(i0+i)*g.C*g.H*g.W : (i0+i+1)*g.C*g.H*g.W]
				for r := 0; r < g.H; r++ {
					im2col.Transpose(dxi[r*g.W:], g.H*g.W, out[(i*cells+r*pw)*g.C:], g.C, g.W, g.C, false)
				}
			}
		}
	})
	sums.addFilter(g, dw)
	bsums.addTo(db)
}

// scratch32 and scratch64 pool the kernels' im2col matrices and
// per-goroutine filter-gradient sums, so that a training step reuses them
// instead of allocating C·KH·KW·OH·OW elements per goroutine and call.
var scratch32, scratch64 sync.Pool

// getScratch returns a pooled buffer of n elements, contents undefined;
// putScratch gives it back.
func getScratch[T tensor.Float](n int) *[]T {
	s, _ := scratchPool[T]().Get().(*[]T)
	if s == nil {
		s = new([]T)
	}
	if cap(*s) < n {
		*s = make([]T, n)
	}
	*s = (*s)[:n]
	return s
}

func putScratch[T tensor.Float](s *[]T) { scratchPool[T]().Put(s) }

func scratchPool[T tensor.Float]() *sync.Pool {
	if _, ok := any(T(0)).(float32); ok {
		return &scratch32
	}
	return &scratch64
}

// addBias adds b[c] to every pixel of channel c of y [n, len(b), p].
func addBias[T tensor.Float](y, b []T, n, c, p int) {
	for i := 0; i < n; i++ {
		for j, v := range b {
			vec.AddConst(y[(i*c+j)*p:(i*c+j+1)*p], v)
		}
	}
}

// biasGrad adds the sum of dy [n, c, p] over images and pixels into db [c],
// images spread over goroutines that each sum into a pooled row of their
// own, added in worker order at the end.
func biasGrad[T tensor.Float](dy, db []T, n, c, p int) {
	part := make([]*[]T, batchWorkers(n))
	forBatch(n, func(worker, lo, hi int) {
		part[worker] = getScratch[T](c)
		acc := *part[worker]
		clear(acc)
		for i := lo; i < hi; i++ {
			biasSums(dy[i*c*p:(i+1)*c*p], acc, p)
		}
	})
	for _, acc := range part {
		for j, v := range *acc {
			db[j] += v
		}
		putScratch(acc)
	}
}

// biasSums adds the sum of each p-long row of dy into acc, each summed in
// float64 (vec.SumF64, AVX for float32) and rounded once.
func biasSums[T tensor.Float](dy, acc []T, p int) {
	for j := range acc {
		acc[j] += T(vec.SumF64(dy[j*p : (j+1)*p]))
	}
}

// batchWorkers is the number of goroutines forBatch uses for n images.
func batchWorkers(n int) int { return max(1, min(n, runtime.GOMAXPROCS(0))) }

// forBatch splits images [0, n) into batchWorkers(n) contiguous runs and
// calls fn(worker, lo, hi) for each on the cores (internal/par), worker
// being the run's number, so that per-worker sums follow the runs and not
// the timing. Runs write disjoint images, so kernels built on it are
// race-free.
func forBatch(n int, fn func(worker, lo, hi int)) {
	workers := batchWorkers(n)
	if workers == 1 {
		fn(0, 0, n)
		return
	}
	par.Run(workers, workers, &batchJob{n: n, chunk: (n + workers - 1) / workers, fn: fn})
}

// batchJob is forBatch's par.Job: part i is run i of chunk images.
type batchJob struct {
	n, chunk int
	fn       func(worker, lo, hi int)
}

func (b *batchJob) Do(_, part int) {
	b.fn(part, min(b.n, part*b.chunk), min(b.n, (part+1)*b.chunk))
}
