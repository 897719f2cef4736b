package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// windowRef is a pool's geometry for refPool, per spatial axis: window,
// stride, dilation, padding before and after, written out in full (no
// zero defaults and no SAME).
type windowRef struct {
	k, s, d, lo, hi []int
	ceil, incl      bool
}

// refOut is ONNX's output size along one axis (the operator's spec:
// floor or ceil of (in + pads − dilated kernel) / stride, plus one; in
// ceil mode less one when the last window starts past the input and its
// leading padding, PyTorch's and ONNX Runtime's rule).
func refOut(in, k, s, d, lo, hi int, ceil bool) int {
	num := in + lo + hi - ((k-1)*d + 1)
	if !ceil {
		return num/s + 1
	}
	out := (num+s-1)/s + 1
	if (out-1)*s >= in+lo {
		out--
	}
	return out
}

// refPool is the direct loop over every output cell and every tap of its
// window, in float64: the max keeps the first of equal values and sends
// the gradient there; the average divides by the taps inside the input,
// or with incl by those inside the padded input. It returns the output
// and the gradient of x for upstream gradient dy (nil: none).
func refPool(t *testing.T, x *tensor.Tensor, r windowRef, isMax bool, dy *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
	t.Helper()
	sp := x.Shape()[2:]
	n := len(sp)
	outShape := append([]int{x.Dim(0), x.Dim(1)}, make([]int, n)...)
	for a := range n {
		outShape[2+a] = refOut(sp[a], r.k[a], r.s[a], r.d[a], r.lo[a], r.hi[a], r.ceil)
	}
	y := tensor.Zeros(tensor.Float64, outShape...)
	dx := tensor.Zeros(tensor.Float64, x.Shape()...)
	inPlane, outPlane := x.Size()/(x.Dim(0)*x.Dim(1)), y.Size()/(x.Dim(0)*x.Dim(1))
	for pl := range x.Dim(0) * x.Dim(1) {
		for o := range outPlane {
			oi := unflat(o, outShape[2:])
			var cells []int // flat indices of the taps inside the input
			padded := 1
			for a := range n {
				cnt := 0
				for tp := range r.k[a] {
					if p := oi[a]*r.s[a] - r.lo[a] + tp*r.d[a]; p < sp[a]+r.hi[a] {
						cnt++
					}
				}
				padded *= cnt
			}
			tap := make([]int, n)
			for {
				flat, inside := 0, true
				for a := range n {
					p := oi[a]*r.s[a] - r.lo[a] + tap[a]*r.d[a]
					inside = inside && p >= 0 && p < sp[a]
					flat = flat*sp[a] + p
				}
				if inside {
					cells = append(cells, pl*inPlane+flat)
				}
				a := n - 1
				for ; a >= 0; a-- {
					if tap[a]++; tap[a] < r.k[a] {
						break
					}
					tap[a] = 0
				}
				if a < 0 {
					break
				}
			}
			require.NotEmpty(t, cells, "reference: window %v reads no input", oi)
			g := 0.0
			if dy != nil {
				g = dy.At(pl*outPlane + o)
			}
			if isMax {
				best := cells[0]
				for _, c := range cells {
					if x.At(c) > x.At(best) {
						best = c
					}
				}
				y.SetAt(pl*outPlane+o, x.At(best))
				dx.SetAt(best, dx.At(best)+g)
				continue
			}
			div := float64(len(cells))
			if r.incl {
				div = float64(padded)
			}
			s := 0.0
			for _, c := range cells {
				s += x.At(c)
				dx.SetAt(c, dx.At(c)+g/div)
			}
			y.SetAt(pl*outPlane+o, s/div)
		}
	}
	return y, dx
}

// cast returns x in dtype dt.
func cast(t *testing.T, x *tensor.Tensor, dt tensor.DType) *tensor.Tensor {
	t.Helper()
	y, err := x.Cast(dt)
	require.NoError(t, err)
	return y
}

// unflat splits a row-major index over dims.
func unflat(i int, dims []int) []int {
	idx := make([]int, len(dims))
	for a := len(dims) - 1; a >= 0; a-- {
		idx[a] = i % dims[a]
		i /= dims[a]
	}
	return idx
}

// windowCases are dilated, ceil-mode, count-include-pad and 3-D pools on
// odd shapes, with asymmetric padding and windows that ceil mode lets run
// past the trailing padding.
var windowCases = []struct {
	name  string
	shape []int
	r     windowRef
}{
	{"2d_dilated", []int{2, 3, 7, 6}, windowRef{k: []int{3, 2}, s: []int{1, 2}, d: []int{2, 3}, lo: []int{0, 0}, hi: []int{0, 0}}},
	{"2d_dilated_padded", []int{1, 2, 5, 7}, windowRef{k: []int{2, 3}, s: []int{2, 1}, d: []int{2, 2}, lo: []int{1, 2}, hi: []int{0, 1}}},
	{"2d_ceil", []int{2, 2, 5, 7}, windowRef{k: []int{2, 3}, s: []int{2, 2}, d: []int{1, 1}, lo: []int{0, 1}, hi: []int{0, 0}, ceil: true}},
	// Ceil mode's rule drops the window that would start in the trailing padding: in 4, pads 1+1, k 2, s 3.
	{"2d_ceil_dropped_window", []int{1, 1, 4, 4}, windowRef{k: []int{2, 2}, s: []int{3, 3}, d: []int{1, 1}, lo: []int{1, 1}, hi: []int{1, 1}, ceil: true}},
	{"2d_ceil_dilated", []int{1, 3, 9, 8}, windowRef{k: []int{3, 3}, s: []int{2, 3}, d: []int{2, 1}, lo: []int{1, 0}, hi: []int{2, 1}, ceil: true}},
	{"2d_include_pad", []int{2, 1, 5, 6}, windowRef{k: []int{3, 3}, s: []int{2, 2}, d: []int{1, 1}, lo: []int{1, 0}, hi: []int{1, 2}, incl: true}},
	{"2d_include_pad_ceil", []int{1, 2, 6, 5}, windowRef{k: []int{3, 2}, s: []int{2, 2}, d: []int{1, 1}, lo: []int{1, 1}, hi: []int{0, 0}, ceil: true, incl: true}},
	{"3d_plain", []int{2, 2, 4, 5, 3}, windowRef{k: []int{2, 2, 2}, s: []int{2, 2, 1}, d: []int{1, 1, 1}, lo: []int{0, 0, 0}, hi: []int{0, 0, 0}}},
	{"3d_padded", []int{1, 3, 5, 4, 6}, windowRef{k: []int{3, 2, 3}, s: []int{2, 1, 2}, d: []int{1, 1, 1}, lo: []int{1, 0, 1}, hi: []int{1, 1, 0}}},
	{"3d_dilated_ceil_incl", []int{1, 2, 7, 5, 6}, windowRef{k: []int{2, 3, 2}, s: []int{2, 2, 3}, d: []int{2, 1, 2}, lo: []int{1, 1, 0}, hi: []int{0, 1, 1}, ceil: true, incl: true}},
	{"3d_one", []int{1, 1, 1, 1, 1}, windowRef{k: []int{1, 1, 1}, s: []int{1, 1, 1}, d: []int{1, 1, 1}, lo: []int{0, 0, 0}, hi: []int{0, 0, 0}}},
}

// opFor builds the op of a window case: a 2-D pool for rank-4 shapes, a
// 3-D one for rank 5, with explicit padding.
func opFor(shape []int, r windowRef, isMax bool) Op {
	if len(shape) == 4 {
		a := Pool2DAttrs{Kernel: [2]int{r.k[0], r.k[1]}, Stride: [2]int{r.s[0], r.s[1]}, Dilation: [2]int{r.d[0], r.d[1]},
			Pad: [4]int{r.lo[0], r.hi[0], r.lo[1], r.hi[1]}, CeilMode: r.ceil, CountIncludePad: r.incl && !isMax}
		if isMax {
			return MaxPool2DOp(a)
		}
		return AvgPool2DOp(a)
	}
	a := Pool3DAttrs{Kernel: [3]int{r.k[0], r.k[1], r.k[2]}, Stride: [3]int{r.s[0], r.s[1], r.s[2]},
		Dilation: [3]int{r.d[0], r.d[1], r.d[2]}, Pad: [6]int{r.lo[0], r.hi[0], r.lo[1], r.hi[1], r.lo[2], r.hi[2]},
		CeilMode: r.ceil, CountIncludePad: r.incl && !isMax}
	if isMax {
		return MaxPool3DOp(a)
	}
	return AvgPool3DOp(a)
}

// TestWindowPoolsMatchReference runs every window case's max and average
// pools, forward and backward, in float64 and float32, against refPool.
func TestWindowPoolsMatchReference(t *testing.T) {
	for i, c := range windowCases {
		for _, isMax := range []bool{true, false} {
			r := c.r
			if isMax {
				r.incl = false
			}
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
				name := c.name + map[bool]string{true: "/max", false: "/avg"}[isMax] + "/" + dt.String()
				t.Run(name, func(t *testing.T) {
					x := cast(t, distinct(uint64(1000+i), c.shape...), dt)
					op := opFor(c.shape, r, isMax)
					y, err := op.Forward([]*tensor.Tensor{x})
					require.NoError(t, err)
					dy := cast(t, randn(uint64(1100+i), y.Shape()...), dt)
					// The reference runs in float64 on the same (rounded) values.
					wantY, wantDx := refPool(t, cast(t, x, tensor.Float64), r, isMax, cast(t, dy, tensor.Float64))
					g, err := op.Backward([]*tensor.Tensor{x}, y, dy, []bool{true})
					require.NoError(t, err)
					tol := 1e-13
					if dt == tensor.Float32 {
						tol = 1e-6
					}
					requireClose(t, wantY, cast(t, y, tensor.Float64), tol, tol)
					requireClose(t, wantDx, cast(t, g[0], tensor.Float64), tol, tol)
				})
			}
		}
	}
}

// TestWindowPoolOfPlainAttrsIsTheFastKernel runs the general windowed pool
// on TF's attributes (no dilation, floor mode, padding left out) and
// checks it against the 2-D kernels of pool.go, bit for bit.
func TestWindowPoolOfPlainAttrsIsTheFastKernel(t *testing.T) {
	for i, c := range poolFastCases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(uint64(1200+i), c.n, c.c, c.h, c.w)
			for _, isMax := range []bool{true, false} {
				plain := &pool2dOp{max: isMax, attrs: c.a}
				_, g, err := plain.geom([]*tensor.Tensor{x})
				require.NoError(t, err)
				want, err := plain.Forward([]*tensor.Tensor{x})
				require.NoError(t, err)
				win, err := plain.windows([]*tensor.Tensor{x}, g)
				require.NoError(t, err)
				got := runPoolWindows(win, x, want.Shape())
				requireSameBits(t, want.Float64s(), got.Float64s())
				dy := randn(uint64(1300+i), want.Shape()...)
				wantDx, err := plain.Backward([]*tensor.Tensor{x}, want, dy, []bool{true})
				require.NoError(t, err)
				requireSameBits(t, wantDx[0].Float64s(), gradPoolWindows(win, x, dy).Float64s())
			}
		})
	}
}

// TestPoolOutputSizes checks output sizes against the values PyTorch's
// pooling_output_shape gives for the same arguments.
func TestPoolOutputSizes(t *testing.T) {
	tests := []struct {
		in, k, s, d, lo, hi int
		ceil                bool
		want                int
	}{
		{in: 5, k: 2, s: 2, d: 1, want: 2},
		{in: 5, k: 2, s: 2, d: 1, ceil: true, want: 3},
		{in: 4, k: 2, s: 3, d: 1, lo: 1, hi: 1, ceil: true, want: 2}, // the third window would start in the trailing padding
		{in: 4, k: 2, s: 3, d: 1, lo: 1, hi: 1, want: 2},
		{in: 7, k: 3, s: 1, d: 2, want: 3},
		{in: 8, k: 3, s: 2, d: 2, lo: 1, hi: 1, ceil: true, want: 4},
		{in: 8, k: 3, s: 2, d: 2, lo: 1, hi: 1, want: 3},
		{in: 6, k: 3, s: 2, d: 1, ceil: true, want: 3},
		{in: 6, k: 3, s: 2, d: 1, want: 2},
	}
	for _, tt := range tests {
		a, err := newPoolAxis(tt.in, tt.k, tt.s, tt.d, tt.lo, tt.hi, tt.ceil)
		require.NoError(t, err)
		assert.Equalf(t, tt.want, a.out, "%+v", tt)
		assert.Equal(t, refOut(tt.in, tt.k, tt.s, tt.d, tt.lo, tt.hi, tt.ceil), a.out)
	}
}

// TestPool3DSame checks SAME padding per axis against explicit padding
// of TF's SAME amounts.
func TestPool3DSame(t *testing.T) {
	x := randn(77, 1, 2, 5, 4, 7)
	same := Pool3DAttrs{Kernel: [3]int{3, 2, 3}, Stride: [3]int{2, 2, 2}, Padding: PadSame}
	// SAME: out = ceil(in/s): 3, 2, 4; total pad (out−1)s + k − in: 2 (1+1), 0, 2 (1+1).
	explicit := Pool3DAttrs{Kernel: same.Kernel, Stride: same.Stride, Pad: [6]int{1, 1, 0, 0, 1, 1}}
	for _, f := range []func(*tensor.Tensor, Pool3DAttrs) (*tensor.Tensor, error){MaxPool3D, AvgPool3D} {
		want, err := f(x, explicit)
		require.NoError(t, err)
		got, err := f(x, same)
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3, 2, 4}, []int(got.Shape()))
		requireSameBits(t, want.Float64s(), got.Float64s())
	}
}

func TestWindowPoolErrors(t *testing.T) {
	z := func(shape ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, shape...) }
	k3 := [2]int{3, 3}
	k222 := [3]int{2, 2, 2}
	tests := []struct {
		name string
		op   Op
		x    *tensor.Tensor
		want string
	}{
		{"negative_dilation", MaxPool2DOp(Pool2DAttrs{Kernel: k3, Dilation: [2]int{1, -1}}), z(1, 1, 5, 5),
			"max_pool2d: inputs float32[1 1 5 5]: want a non-negative dilation"},
		{"include_pad_max", MaxPool2DOp(Pool2DAttrs{Kernel: k3, CountIncludePad: true}), z(1, 1, 5, 5),
			"count_include_pad applies to the average pool only"},
		{"dilated_too_big", AvgPool2DOp(Pool2DAttrs{Kernel: k3, Dilation: [2]int{3, 1}}), z(1, 1, 6, 6),
			"avg_pool2d: inputs float32[1 1 6 6]: height: dilated window 7 is larger than the padded input 6"},
		// Ceil mode on a 1-row input padded by 3 above: window 0's taps −3 and −1 are both padding.
		{"window_of_padding", MaxPool2DOp(Pool2DAttrs{Kernel: [2]int{2, 1}, Dilation: [2]int{2, 1}, Pad: [4]int{3, 0, 0, 0}, CeilMode: true}), z(1, 1, 1, 3),
			"height: window 0 (taps -3..-1 step 2) reads no input cell of 1"},
		{"3d_rank", MaxPool3DOp(Pool3DAttrs{Kernel: k222}), z(1, 1, 4, 4), "max_pool3d: inputs float32[1 1 4 4]: want x [N, C, D, H, W]"},
		{"3d_no_kernel", AvgPool3DOp(Pool3DAttrs{}), z(1, 1, 4, 4, 4), "want a positive kernel"},
		{"3d_negative_pad", AvgPool3DOp(Pool3DAttrs{Kernel: k222, Pad: [6]int{0, 0, -1, 0, 0, 0}}), z(1, 1, 4, 4, 4), "negative padding"},
		{"3d_same_with_pad", MaxPool3DOp(Pool3DAttrs{Kernel: k222, Padding: PadSame, Pad: [6]int{1}}), z(1, 1, 4, 4, 4), "padding mode same takes no explicit Pad"},
		{"3d_too_big", MaxPool3DOp(Pool3DAttrs{Kernel: [3]int{2, 5, 2}}), z(1, 1, 4, 4, 4), "max_pool3d: inputs float32[1 1 4 4 4]: height: dilated window 5 is larger than the padded input 4"},
		{"3d_include_pad_max", MaxPool3DOp(Pool3DAttrs{Kernel: k222, CountIncludePad: true}), z(1, 1, 4, 4, 4), "count_include_pad applies to the average pool only"},
		{"3d_ints", MaxPool3DOp(Pool3DAttrs{Kernel: k222}), tensor.Zeros(tensor.Int64, 1, 1, 2, 2, 2), "want float32 or float64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.op.Forward([]*tensor.Tensor{tt.x})
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, tt.op.(Checker).Check([]*tensor.Tensor{tt.x}), tt.want)
		})
	}
	_, err := MaxPool3DOp(Pool3DAttrs{Kernel: k222}).Backward([]*tensor.Tensor{z(1, 1, 2, 2, 2)}, nil, z(1, 1, 1, 1, 1), []bool{true})
	require.ErrorContains(t, err, "max_pool3d")
}

var _ = addWindowGradCases()

// addWindowGradCases adds numeric-gradient cases of the dilated,
// ceil-mode and count-include-pad 2-D pools and of the 3-D pools; max
// pools get distinct inputs so no argmax moves under the check.
func addWindowGradCases() bool {
	for i, c := range []struct {
		name string
		a    Attrs
	}{
		{"dilated", Attrs{Kernel: [2]int{2, 2}, Strides: [2]int{1, 2}, Dilations: [2]int{2, 2}, Pads: [4]int{1, 0, 0, 1}}},
		{"ceil", Attrs{Kernel: [2]int{2, 3}, Strides: [2]int{2, 2}, CeilMode: true}},
		{"dilated_same", Attrs{Kernel: [2]int{3, 2}, Strides: [2]int{2, 1}, Dilations: [2]int{2, 1}, Padding: PadSame}},
	} {
		addGradCases("max_pool2d", gradCase{name: c.name, attrs: c.a, in: ins(distinct(uint64(60+i), 2, 2, 6, 5)), wrt: []int{0}})
		addGradCases("avg_pool2d", gradCase{name: c.name, attrs: c.a, in: ins(randn(uint64(70+i), 2, 2, 6, 5)), wrt: []int{0}})
	}
	incl := Attrs{Kernel: [2]int{3, 3}, Strides: [2]int{2, 2}, Pads: [4]int{1, 1, 0, 1}, CeilMode: true, CountIncludePad: true}
	addGradCases("avg_pool2d", gradCase{name: "include_pad_ceil", attrs: incl, in: ins(randn(80, 1, 2, 6, 5)), wrt: []int{0}})
	for i, a := range []Attrs{
		{KernelDhw: [3]int{2, 2, 2}},
		{KernelDhw: [3]int{3, 2, 3}, StridesDhw: [3]int{2, 1, 2}, PadsDhw: [6]int{1, 1, 0, 1, 1, 0}},
		{KernelDhw: [3]int{2, 3, 2}, StridesDhw: [3]int{1, 2, 2}, DilationsDhw: [3]int{2, 1, 1}, Padding: PadSame, CeilMode: true},
	} {
		name := []string{"k2", "padded", "dilated_same"}[i]
		addGradCases("max_pool3d", gradCase{name: name, attrs: a, in: ins(distinct(uint64(90+i), 2, 2, 4, 5, 4)), wrt: []int{0}})
		addGradCases("avg_pool3d", gradCase{name: name, attrs: a, in: ins(randn(uint64(95+i), 2, 2, 4, 5, 4)), wrt: []int{0}})
	}
	a := Attrs{KernelDhw: [3]int{2, 2, 3}, StridesDhw: [3]int{2, 2, 2}, PadsDhw: [6]int{1, 0, 0, 1, 1, 1}, CeilMode: true, CountIncludePad: true}
	addGradCases("avg_pool3d", gradCase{name: "include_pad_ceil", attrs: a, in: ins(randn(99, 1, 2, 5, 4, 5)), wrt: []int{0}})
	return true
}
