package conv

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/winograd"
	"github.com/plumbml/plumb/tensor"
)

// padding modes of attrs, as ops' PadExplicit and PadSame.
const (
	padExplicit = iota
	padSame
)

// attrs are a test case's convolution attributes, as ops.Conv2DAttrs
// gives them: zero strides, dilations and groups mean 1, Pad is (top,
// bottom, left, right), and Padding padSame is TF's SAME rule.
type attrs struct {
	Stride, Dilation [2]int
	Pad              [4]int
	Padding          int
	Groups           int
}

// convCase is one convolution shape: x [n, c, h, w], w [o, c/groups, kh, kw].
type convCase struct {
	name                  string
	n, c, h, w, o, kh, kw int
	a                     attrs
}

// geomOf returns the geometry of c, the output size from its padding as
// conv2d computes it.
func geomOf(t testing.TB, c convCase) Geom {
	t.Helper()
	a := c.a
	for _, v := range []*int{&a.Stride[0], &a.Stride[1], &a.Dilation[0], &a.Dilation[1], &a.Groups} {
		*v = max(*v, 1)
	}
	g := Geom{N: c.n, Cout: c.o, Groups: a.Groups, Geom: im2col.Geom{C: c.c, H: c.h, W: c.w, KH: c.kh, KW: c.kw,
		SH: a.Stride[0], SW: a.Stride[1], DH: a.Dilation[0], DW: a.Dilation[1]}}
	effH, effW := (c.kh-1)*g.DH+1, (c.kw-1)*g.DW+1
	pad := a.Pad
	if a.Padding == padSame {
		side := func(in, eff, s int) (int, int) {
			total := max(((in+s-1)/s-1)*s+eff-in, 0)
			return total / 2, total - total/2
		}
		pad[0], pad[1] = side(c.h, effH, g.SH)
		pad[2], pad[3] = side(c.w, effW, g.SW)
	}
	g.PT, g.PL = pad[0], pad[2]
	g.OH = (c.h+pad[0]+pad[1]-effH)/g.SH + 1
	g.OW = (c.w+pad[2]+pad[3]-effW)/g.SW + 1
	require.Positive(t, min(g.OH, g.OW), "case %s: the kernel fits", c.name)
	return g
}

// randn returns a seeded float64 tensor of standard normal values.
func randn(seed uint64, shape ...int) *tensor.Tensor {
	t, err := tensor.RandNormal(tensor.NewRNG(seed), tensor.Float64, 0, 1, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// f32 converts a float64 tensor to float32.
func f32(t *tensor.Tensor) *tensor.Tensor {
	c, err := t.Cast(tensor.Float32)
	if err != nil {
		panic(err)
	}
	return c
}

// requireNear requires got to match want within tol·(1 + |want|) per element.
func requireNear[T tensor.Float](t *testing.T, what string, want, got []T, tol float64) {
	t.Helper()
	require.Len(t, got, len(want))
	for j := range want {
		require.InDelta(t, float64(want[j]), float64(got[j]), tol*(1+math.Abs(float64(want[j]))), "%s[%d]", what, j)
	}
}

// rowsCases are ungrouped convolutions for the channels-last kernels:
// channel counts of 1, 3, 17 and widths of 127 and 513, strides above the
// kernel, dilations, pads beyond the kernel's reach (a cropped data
// gradient window), single images (whose GEMMs use every core), batches
// whose share on a core splits into chunks of two or three images with a
// ragged last one, and a ResNet projection shortcut (1×1, stride 2).
var rowsCases = []convCase{
	{"one_by_one", 1, 1, 1, 1, 1, 1, 1, attrs{}},
	{"c3_o17_same", 3, 3, 7, 5, 17, 3, 3, attrs{Padding: padSame}},
	{"c17_o3_stride2", 2, 17, 9, 8, 3, 3, 3, attrs{Stride: [2]int{2, 2}, Padding: padSame}},
	{"w127_stride3_over_kernel", 2, 3, 3, 127, 5, 2, 2, attrs{Stride: [2]int{1, 3}}},
	{"w513_row", 1, 1, 1, 513, 3, 1, 5, attrs{Pad: [4]int{0, 0, 2, 2}}},
	{"dilated_pad_beyond_reach", 3, 2, 9, 7, 4, 3, 2, attrs{Dilation: [2]int{2, 3}, Pad: [4]int{5, 1, 4, 6}}},
	{"dilated_strided_asym", 2, 3, 11, 10, 2, 3, 3, attrs{Stride: [2]int{2, 3}, Dilation: [2]int{2, 1}, Pad: [4]int{1, 2, 0, 3}}},
	{"grid_chunks_ragged", 7, 16, 21, 21, 16, 3, 3, attrs{Padding: padSame}},
	{"grid_dilated", 2, 17, 40, 40, 19, 3, 2, attrs{Dilation: [2]int{2, 3}, Padding: padSame}},
	{"grid_cropped_adjoint", 2, 11, 30, 31, 13, 3, 3, attrs{Pad: [4]int{3, 0, 1, 4}}},
	{"chunks_strided", 5, 17, 67, 67, 3, 3, 3, attrs{Stride: [2]int{2, 2}, Padding: padSame}},
	{"chunks_strided_ragged", 7, 16, 28, 27, 16, 3, 3, attrs{Stride: [2]int{2, 2}, Padding: padSame}},
	{"strided_dilated_same", 2, 11, 23, 26, 7, 3, 3, attrs{Stride: [2]int{3, 2}, Dilation: [2]int{2, 1}, Padding: padSame}},
	{"strided_valid_short", 3, 8, 10, 11, 8, 3, 3, attrs{Stride: [2]int{2, 2}}}, // last row and column unread
	// chunks of several small images that minChunkRows sets, the last ragged
	{"min_rows_chunks_ragged", 11, 61, 7, 9, 19, 3, 3, attrs{Padding: padSame}},
	{"projection_1x1_stride2", 9, 16, 9, 9, 33, 1, 1, attrs{Stride: [2]int{2, 2}}},
}

// TestConvRowsMatchIm2Col checks the channels-last kernels (forward with
// bias, data gradient with bias as conv2d_transpose's forward uses it, and
// filter gradient) against the per-image im2col kernels on rowsCases, in
// float64 and float32, and that the cases reach both the row-matrix and
// the implicit-GEMM paths of each.
func TestConvRowsMatchIm2Col(t *testing.T) {
	var paths [2][3]bool // [grid][forward, filter, stride-1 data gradient]
	var shared [2]bool   // gridBackward, rowsBackward
	var writes [2]bool   // channels-last adjointWritesAll false, true
	defer func() {
		require.Equal(t, [2][3]bool{{true, true, true}, {true, true, true}}, paths, "paths reached")
		require.Equal(t, [2]bool{true, true}, shared, "gridBackward, rowsBackward reached")
		require.Equal(t, [2]bool{true, true}, writes, "data gradient written whole and not")
	}()
	for i, c := range rowsCases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(uint64(400+i), c.n, c.c, c.h, c.w)
			w := randn(uint64(500+i), c.o, c.c, c.kh, c.kw)
			g := geomOf(t, c)
			require.Equal(t, 1, g.Groups)
			fwd := gridPays(g.Geom)
			paths[b2i(fwd)][0], paths[b2i(fwd)][1] = true, true
			if g.adjointAsConv() {
				paths[b2i(gridPays(g.adjoint()))][2] = true
			}
			shared[0] = shared[0] || g.sharedGrid()
			shared[1] = shared[1] || g.sharedRows()
			if g.rowsPay() {
				writes[b2i(g.AdjointWritesAll())] = true
			}
			dy := randn(uint64(600+i), g.N, g.Cout, g.OH, g.OW)
			bo, bc := randn(uint64(700+i), g.Cout), randn(uint64(800+i), g.C)
			t.Run("float64", func(t *testing.T) {
				checkRowsKernels(t, g, x.Float64s(), w.Float64s(), dy.Float64s(), bo.Float64s(), bc.Float64s(), 1e-12)
			})
			t.Run("float32", func(t *testing.T) {
				checkRowsKernels(t, g, f32(x).Float32s(), f32(w).Float32s(), f32(dy).Float32s(), f32(bo).Float32s(), f32(bc).Float32s(), 1e-4)
			})
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func checkRowsKernels[T tensor.Float](t *testing.T, g Geom, x, w, dy, bo, bc []T, tol float64) {
	near := func(what string, want, got []T) {
		t.Helper()
		require.Len(t, got, len(want))
		for j := range want {
			require.InDelta(t, float64(want[j]), float64(got[j]), tol*(1+math.Abs(float64(want[j]))), "%s[%d]", what, j)
		}
	}
	// An output the kernel claims to write whole (dataWritesAll,
	// adjointWritesAll: runConv then skips zeroing it) starts as NaN, so a
	// cell it leaves alone fails the comparison.
	out := func(n int, writesAll bool) []T {
		o := make([]T, n)
		if writesAll {
			for j := range o {
				o[j] = T(math.NaN())
			}
		}
		return o
	}
	want, got := make([]T, len(dy)), out(len(dy), g.DataWritesAll())
	im2colData(g, x, w, want)
	addBias(want, bo, g.N, g.Cout, g.Cols())
	rowsData(g, x, w, bo, got)
	near("y", want, got)

	want, got = make([]T, len(x)), out(len(x), g.AdjointWritesAll())
	im2colDataAdjoint(g, dy, w, want)
	addBias(want, bc, g.N, g.C, g.H*g.W)
	rowsDataAdjoint(g, dy, w, bc, got)
	near("dx", want, got)

	wantW, got := make([]T, len(w)), make([]T, len(w))
	im2colFilter(g, x, dy, wantW)
	rowsFilter(g, x, dy, got)
	near("dw", wantW, got)

	for _, shared := range []struct {
		on bool
		fn func(g Geom, x, w, dy, dx, dw, db []T)
	}{{g.sharedGrid(), gridBackward[T]}, {g.sharedRows(), rowsBackward[T]}} {
		if !shared.on {
			continue
		}
		wantX := make([]T, len(x))
		im2colDataAdjoint(g, dy, w, wantX)
		wantB := make([]T, g.Cout)
		biasGrad(dy, wantB, g.N, g.Cout, g.Cols())
		gotX, gotW, gotB := out(len(x), g.AdjointWritesAll()), make([]T, len(w)), make([]T, g.Cout)
		shared.fn(g, x, w, dy, gotX, gotW, gotB)
		near("shared dx", wantX, gotX)
		near("shared dw", wantW, gotW)
		near("shared db", wantB, gotB)
	}
}

// depthwiseCases are depthwise convolutions (groups = C) with channel
// multipliers 1, 2 and 3, odd sizes, strides, dilations and padding
// beyond the kernel's reach.
var depthwiseCases = []convCase{
	{"one", 1, 1, 1, 1, 2, 1, 1, attrs{Groups: 1}},
	{"c3_same", 2, 3, 7, 5, 3, 3, 3, attrs{Padding: padSame, Groups: 3}},
	{"c17_x2_stride2", 3, 17, 9, 8, 34, 3, 3, attrs{Stride: [2]int{2, 2}, Padding: padSame, Groups: 17}},
	{"w127_x3_stride_over_kernel", 1, 3, 3, 127, 9, 2, 2, attrs{Stride: [2]int{1, 3}, Groups: 3}},
	{"w513_row", 1, 2, 1, 513, 2, 1, 5, attrs{Pad: [4]int{0, 0, 2, 2}, Groups: 2}},
	{"dilated_pad_beyond_reach", 2, 4, 9, 7, 4, 3, 2, attrs{Dilation: [2]int{2, 3}, Pad: [4]int{5, 1, 4, 6}, Groups: 4}},
	{"dilated_strided_asym", 2, 3, 11, 10, 6, 3, 3, attrs{Stride: [2]int{2, 3}, Dilation: [2]int{2, 1}, Pad: [4]int{1, 2, 0, 3}, Groups: 3}},
	{"row_stride_only_x2", 3, 5, 9, 19, 10, 3, 3, attrs{Stride: [2]int{2, 1}, Dilation: [2]int{1, 2}, Padding: padSame, Groups: 5}},
	{"b1_c37_stride2_planes_over_cores", 1, 37, 15, 13, 37, 3, 3, attrs{Stride: [2]int{2, 2}, Padding: padSame, Groups: 37}},
	{"w1_stride2_empty_phase", 2, 3, 5, 1, 3, 3, 3, attrs{Stride: [2]int{2, 2}, Padding: padSame, Groups: 3}},
	{"k5_stride2_pad2", 1, 6, 14, 17, 6, 5, 5, attrs{Stride: [2]int{2, 2}, Pad: [4]int{2, 2, 2, 2}, Groups: 6}},
}

// TestConvDepthwiseMatchesIm2Col checks the depthwise kernels against the
// per-image im2col kernels on depthwiseCases, in float64 and float32.
func TestConvDepthwiseMatchesIm2Col(t *testing.T) {
	for i, c := range depthwiseCases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(uint64(1000+i), c.n, c.c, c.h, c.w)
			w := randn(uint64(1100+i), c.o, 1, c.kh, c.kw)
			g := geomOf(t, c)
			require.Equal(t, c.c > 1, g.depthwise())
			dy := randn(uint64(1200+i), g.N, g.Cout, g.OH, g.OW)
			t.Run("float64", func(t *testing.T) {
				checkDepthwiseKernels(t, g, x.Float64s(), w.Float64s(), dy.Float64s(), 1e-12)
			})
			t.Run("float32", func(t *testing.T) {
				checkDepthwiseKernels(t, g, f32(x).Float32s(), f32(w).Float32s(), f32(dy).Float32s(), 1e-4)
			})
		})
	}
}

func checkDepthwiseKernels[T tensor.Float](t *testing.T, g Geom, x, w, dy []T, tol float64) {
	near := func(what string, want, got []T) {
		t.Helper()
		for j := range want {
			require.InDelta(t, float64(want[j]), float64(got[j]), tol*(1+math.Abs(float64(want[j]))), "%s[%d]", what, j)
		}
	}
	want, got := make([]T, len(dy)), make([]T, len(dy))
	im2colData(g, x, w, want)
	depthwiseData(g, x, w, got)
	near("y", want, got)
	want, got = make([]T, len(x)), make([]T, len(x))
	im2colDataAdjoint(g, dy, w, want)
	depthwiseDataAdjoint(g, dy, w, got)
	near("dx", want, got)
	want, got = make([]T, len(w)), make([]T, len(w))
	im2colFilter(g, x, dy, want)
	depthwiseFilter(g, x, dy, got)
	near("dw", want, got)
}

// TestGridLayout checks which windows share their padding: a 3×3 SAME
// layer keeps only its top row and left column of padding, and a layer
// padded more below or right than above or left, padded past its
// kernel's reach, or with a negative pad keeps its own windows.
func TestGridLayout(t *testing.T) {
	same := func(h, pt, pb int) im2col.Geom { // 3×3, stride 1, h×h, pads pt/pb on both axes
		o := h + pt + pb - 2
		return im2col.Geom{C: 8, H: h, W: h, KH: 3, KW: 3, SH: 1, SW: 1, DH: 1, DW: 1, PT: pt, PL: pt, OH: o, OW: o}
	}
	for _, tc := range []struct {
		name    string
		g       im2col.Geom
		compact bool
	}{
		{"same_32", same(32, 1, 1), true},
		{"same_8", same(8, 1, 1), true},
		{"more_above", same(8, 2, 1), true},
		{"more_below", same(8, 1, 2), false},
		{"past_the_reach", same(8, 3, 3), false},
		{"valid", same(8, 0, 0), true},
		{"negative", same(8, -1, 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := gridLayout(tc.g)
			if !tc.compact {
				require.Equal(t, tc.g, l)
				return
			}
			require.Equal(t, tc.g.H+tc.g.PT, l.PaddedH())
			require.Equal(t, tc.g.W+tc.g.PL, l.PaddedW())
			require.LessOrEqual(t, tc.g.OW, l.PaddedW(), "the outputs fit a row")
			l.OH, l.OW = tc.g.OH, tc.g.OW
			require.Equal(t, tc.g, l, "only OH and OW differ")
		})
	}
}

// winogradCases are 3×3 stride-1 convolutions that winogradPays takes in
// float32: odd sizes (partial tiles), asymmetric, VALID and beyond-reach
// padding (whose data gradient starts inside dy), one image (the parallel
// GEMMs), and small images that share a block, the last block ragged.
var winogradCases = []convCase{
	{"c16_o16_same_odd", 3, 16, 9, 7, 16, 3, 3, attrs{Padding: padSame}},
	{"c24_o40_asym", 2, 24, 11, 6, 40, 3, 3, attrs{Pad: [4]int{2, 0, 1, 2}}},
	{"c16_o32_valid", 2, 16, 20, 21, 32, 3, 3, attrs{}},
	{"c32_o16_pad_beyond_reach", 2, 32, 6, 5, 16, 3, 3, attrs{Pad: [4]int{3, 1, 0, 4}}},
	{"one_image_c64", 1, 64, 8, 8, 64, 3, 3, attrs{Padding: padSame}},
	{"blocks_of_images_ragged", 13, 64, 8, 8, 64, 3, 3, attrs{Padding: padSame}},
	{"one_pixel", 5, 16, 1, 1, 16, 3, 3, attrs{Padding: padSame}},
}

// TestConvWinogradMatchesIm2Col checks the forward pass and the data
// gradient by Winograd's F(2×2, 3×3) against the per-image im2col kernels
// on winogradCases (checkRowsKernels, float32), and that it took both.
func TestConvWinogradMatchesIm2Col(t *testing.T) {
	if !winograd.Fast(16, 16) {
		t.Skip("no vector Winograd transforms on this CPU: the direct kernels run")
	}
	for i, c := range winogradCases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(uint64(900+i), c.n, c.c, c.h, c.w)
			w := randn(uint64(1000+i), c.o, c.c, c.kh, c.kw)
			g := geomOf(t, c)
			require.True(t, winogradPays[float32](g.Geom, g.Cout), "forward by Winograd")
			require.True(t, g.adjointAsConv() && winogradPays[float32](g.adjoint(), g.C), "data gradient by Winograd")
			require.False(t, winogradPays[float64](g.Geom, g.Cout), "float64 stays direct")
			dy := randn(uint64(1100+i), g.N, g.Cout, g.OH, g.OW)
			bo, bc := randn(uint64(1200+i), g.Cout), randn(uint64(1300+i), g.C)
			checkRowsKernels(t, g, f32(x).Float32s(), f32(w).Float32s(), f32(dy).Float32s(), f32(bo).Float32s(), f32(bc).Float32s(), 1e-4)

			// Through Backward, the gradients skip the shared kernels.
			gotX, gotW := make([]float32, x.Size()), make([]float32, w.Size())
			Backward(g, false, f32(x).Float32s(), f32(w).Float32s(), f32(dy).Float32s(), gotX, gotW, nil)
			wantX, wantW := make([]float32, x.Size()), make([]float32, w.Size())
			im2colDataAdjoint(g, f32(dy).Float32s(), f32(w).Float32s(), wantX)
			im2colFilter(g, f32(x).Float32s(), f32(dy).Float32s(), wantW)
			requireNear(t, "dx", wantX, gotX, 1e-4)
			requireNear(t, "dw", wantW, gotW, 1e-4)
		})
	}
}

// BenchmarkConv2DDepthwise times forward plus backward (input and filter
// gradients) of a 3×3 SAME depthwise convolution, 64 channels at 32² and
// 128 at 16² with strides 1 and 2, batch 32, float32; after each step
// (timer stopped) it runs the per-image im2col kernels on the same data,
// and speedup is their time over the depthwise kernels'.
func BenchmarkConv2DDepthwise(b *testing.B) {
	for _, c := range []struct{ c, h, stride int }{{64, 32, 1}, {64, 32, 2}, {128, 16, 1}} {
		b.Run(fmt.Sprintf("%dch_%dx%d_s%d", c.c, c.h, c.h, c.stride), func(b *testing.B) {
			g := geomOf(b, convCase{"", 32, c.c, c.h, c.h, c.c, 3, 3, attrs{Stride: [2]int{c.stride, c.stride}, Padding: padSame, Groups: c.c}})
			xs, ws := f32(randn(1, 32, c.c, c.h, c.h)).Float32s(), f32(randn(2, c.c, 1, 3, 3)).Float32s()
			ys := make([]float32, g.N*g.Cout*g.OH*g.OW)
			dx, dw := make([]float32, len(xs)), make([]float32, len(ws))
			var ref time.Duration
			for b.Loop() {
				depthwiseData(g, xs, ws, ys)
				depthwiseDataAdjoint(g, ys, ws, dx)
				depthwiseFilter(g, xs, ys, dw)
				b.StopTimer()
				start := time.Now()
				im2colData(g, xs, ws, ys)
				im2colDataAdjoint(g, ys, ws, dx)
				im2colFilter(g, xs, ys, dw)
				ref += time.Since(start)
				b.StartTimer()
			}
			b.ReportMetric(ref.Seconds()/b.Elapsed().Seconds(), "speedup")
		})
	}
}

// TestChoose checks which algorithm the geometry picks: the channels-last
// one for ungrouped convolutions whose kernel rows hold at least 16 values
// of the narrower of C and Cout, the depthwise one for groups = C > 1, and
// im2col for the rest.
func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		c    convCase
		want Algorithm[float32]
	}{
		{convCase{"mnist_first_layer", 64, 1, 28, 28, 20, 5, 5, attrs{}}, im2colAlg[float32]{}},
		{convCase{"mnist_second_layer", 64, 20, 12, 12, 50, 5, 5, attrs{}}, rowsAlg[float32]{}},
		{convCase{"resnet_3x3", 128, 16, 32, 32, 16, 3, 3, attrs{Padding: padSame}}, rowsAlg[float32]{}},
		{convCase{"narrow_3x3", 2, 5, 9, 9, 5, 3, 3, attrs{}}, im2colAlg[float32]{}},
		{convCase{"depthwise", 2, 8, 9, 9, 16, 3, 3, attrs{Groups: 8}}, depthwiseAlg[float32]{}},
		{convCase{"grouped", 2, 8, 9, 9, 16, 3, 3, attrs{Groups: 2}}, im2colAlg[float32]{}},
	} {
		t.Run(tc.c.name, func(t *testing.T) {
			require.IsType(t, tc.want, Choose[float32](geomOf(t, tc.c)))
		})
	}
}

// TestIm2ColMatchesNaive checks the im2col algorithm's forward pass, the
// reference the other algorithms are tested against, against the
// textbook seven-loop convolution on grouped, strided, dilated and
// asymmetrically padded cases.
func TestIm2ColMatchesNaive(t *testing.T) {
	for i, c := range []convCase{
		{"basic", 1, 1, 5, 5, 1, 3, 3, attrs{}},
		{"stride2_same_batch3", 3, 3, 7, 9, 4, 3, 3, attrs{Stride: [2]int{2, 2}, Padding: padSame}},
		{"dilation2", 2, 2, 9, 8, 3, 3, 3, attrs{Dilation: [2]int{2, 2}}},
		{"explicit_asym", 1, 2, 6, 5, 2, 3, 2, attrs{Stride: [2]int{2, 1}, Pad: [4]int{1, 2, 0, 3}}},
		{"groups2", 3, 4, 6, 6, 6, 3, 3, attrs{Pad: [4]int{1, 1, 1, 1}, Groups: 2}},
		{"pad_only_right_groups", 3, 6, 5, 5, 3, 2, 2, attrs{Pad: [4]int{0, 0, 0, 1}, Groups: 3, Stride: [2]int{1, 2}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := geomOf(t, c)
			x := randn(uint64(100+i), c.n, c.c, c.h, c.w).Float64s()
			w := randn(uint64(200+i), c.o, c.c/g.Groups, c.kh, c.kw).Float64s()
			b := randn(uint64(300+i), c.o).Float64s()
			got := make([]float64, g.N*g.Cout*g.OH*g.OW)
			im2colAlg[float64]{}.Forward(g, x, w, b, got)
			requireNear(t, "y", naiveConv(g, x, w, b), got, 1e-12)
		})
	}
}

// naiveConv is y = conv(x, w) + b by the definition, one output at a time.
func naiveConv(g Geom, x, w, b []float64) []float64 {
	cg, og := g.C/g.Groups, g.Cout/g.Groups
	y := make([]float64, g.N*g.Cout*g.OH*g.OW)
	for n := range g.N {
		for o := range g.Cout {
			for oh := range g.OH {
				for ow := range g.OW {
					s := b[o]
					for ci := range cg {
						c := o/og*cg + ci
						for i := range g.KH {
							for j := range g.KW {
								ih, iw := oh*g.SH-g.PT+i*g.DH, ow*g.SW-g.PL+j*g.DW
								if ih >= 0 && ih < g.H && iw >= 0 && iw < g.W {
									s += x[((n*g.C+c)*g.H+ih)*g.W+iw] * w[((o*cg+ci)*g.KH+i)*g.KW+j]
								}
							}
						}
					}
					y[((n*g.Cout+o)*g.OH+oh)*g.OW+ow] = s
				}
			}
		}
	}
	return y
}

// Unpadded 1×1 stride-1 convolutions run as one GEMM per image
// (pointwiseForward), through Forward and through prepared weights alike:
// both match the im2col reference plus bias on odd shapes, batches below
// and above the core count, in float64 and float32; a padded 1×1 one
// keeps the channels-last kernels.
func TestPointwiseMatchesIm2Col(t *testing.T) {
	for i, c := range []convCase{
		{"b1_c17_o9", 1, 17, 5, 7, 9, 1, 1, attrs{}},
		{"b3_c16_o24", 3, 16, 4, 4, 24, 1, 1, attrs{}},
		{"b5_c3_o2_row", 5, 3, 1, 13, 2, 1, 1, attrs{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := randn(uint64(1300+i), c.n, c.c, c.h, c.w)
			w := randn(uint64(1400+i), c.o, c.c, 1, 1)
			b := randn(uint64(1500+i), c.o)
			g := geomOf(t, c)
			require.True(t, g.pointwise())
			t.Run("float64", func(t *testing.T) { checkPointwise(t, g, x.Float64s(), w.Float64s(), b.Float64s(), 1e-12) })
			t.Run("float32", func(t *testing.T) {
				checkPointwise(t, g, f32(x).Float32s(), f32(w).Float32s(), f32(b).Float32s(), 1e-5)
			})
		})
	}
	padded := geomOf(t, convCase{"padded", 1, 4, 3, 3, 4, 1, 1, attrs{Pad: [4]int{1, 1, 1, 1}}})
	require.True(t, padded.pointwiseFilter())
	require.False(t, padded.pointwise())
}

func checkPointwise[T tensor.Float](t *testing.T, g Geom, x, w, b []T, tol float64) {
	t.Helper()
	want := make([]T, g.N*g.Cout*g.Cols())
	im2colData(g, x, w, want)
	addBias(want, b, g.N, g.Cout, g.Cols())
	for _, prepared := range []bool{false, true} {
		got := make([]T, len(want))
		for i := range got {
			got[i] = 7 // Forward writes every element
		}
		if prepared {
			ForwardPrepared(g, Prepare(g, w), x, w, b, got)
		} else {
			Forward(g, false, x, w, b, got)
		}
		for j := range want {
			require.InDelta(t, float64(want[j]), float64(got[j]), tol*(1+math.Abs(float64(want[j]))), "prepared %v y[%d]", prepared, j)
		}
	}
}
