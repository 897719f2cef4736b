package ops

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/tensor"
)

// distinct returns a float64 tensor whose elements are a seeded shuffle of
// 0.1·(0..n−1) − 0.05·n: no ties, and gaps far wider than gradcheck's eps,
// so a max pool's argmax never moves under the numeric check.
func distinct(seed uint64, shape ...int) *tensor.Tensor {
	t := tensor.Zeros(tensor.Float64, shape...)
	n := t.Size()
	for i, p := range tensor.NewRNG(seed).Perm(n) {
		t.Float64s()[i] = 0.1*float64(p) - 0.05*float64(n)
	}
	return t
}

var poolGradAttrs = []struct {
	name string
	a    Attrs
}{
	{"k2", Attrs{Kernel: [2]int{2, 2}}},
	{"k3_s2_same", Attrs{Kernel: [2]int{3, 3}, Strides: [2]int{2, 2}, Padding: PadSame}},
	{"asym_pad", Attrs{Kernel: [2]int{3, 2}, Strides: [2]int{1, 2}, Pads: [4]int{1, 0, 0, 1}}},
}

var _ = addPoolGradCases()

func addPoolGradCases() bool {
	for i, c := range poolGradAttrs {
		x := distinct(uint64(30+i), 2, 2, 5, 4)
		addGradCases("max_pool2d", gradCase{name: c.name, attrs: c.a, in: ins(x), wrt: []int{0}})
		addGradCases("avg_pool2d", gradCase{name: c.name, attrs: c.a, in: ins(randn(uint64(40+i), 2, 2, 5, 4)), wrt: []int{0}})
	}
	addGradCases("global_avg_pool2d", gradCase{name: "3x4", attrs: Attrs{}, in: ins(randn(50, 2, 3, 3, 4)), wrt: []int{0}})
	return true
}

var poolCases = []struct {
	name       string
	n, c, h, w int
	a          Pool2DAttrs
}{
	{"k2_default_stride", 2, 3, 4, 6, Pool2DAttrs{Kernel: [2]int{2, 2}}},
	{"k3_s2_same_even_pad", 1, 2, 5, 5, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: PadSame}},
	{"k3_s2_same_odd_pad", 3, 2, 6, 6, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: PadSame}},
	{"k3_s1_same", 1, 1, 4, 7, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: PadSame}},
	{"explicit_asym", 2, 2, 5, 6, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{1, 2}, Pad: [4]int{1, 0, 2, 1}}},
	{"stride_over_kernel", 1, 2, 7, 8, Pool2DAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{3, 3}}},
	{"k1_s2", 2, 1, 5, 4, Pool2DAttrs{Kernel: [2]int{1, 1}, Stride: [2]int{2, 2}}},
	{"kernel_is_image", 2, 3, 4, 5, Pool2DAttrs{Kernel: [2]int{4, 5}}},
	{"valid_odd", 1, 2, 7, 7, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: PadValid}},
	{"rect_kernel_same", 1, 1, 3, 9, Pool2DAttrs{Kernel: [2]int{1, 4}, Stride: [2]int{1, 3}, Padding: PadSame}},
}

// naivePool is the direct loop over every window cell, skipping padding:
// the max keeps the first of equal values; the mean divides by the number
// of input cells in the window.
func naivePool(t *testing.T, x *tensor.Tensor, a Pool2DAttrs, isMax bool) *tensor.Tensor {
	n, c, h, w := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	s := a.Stride
	for i := range s {
		if s[i] == 0 {
			s[i] = a.Kernel[i]
		}
	}
	p := a.Pad
	if a.Padding == PadSame {
		var err error
		p, err = SamePadding(h, w, a.Kernel[0], a.Kernel[1], s[0], s[1], 1, 1)
		require.NoError(t, err)
	}
	oh, ow := (h+p[0]+p[1]-a.Kernel[0])/s[0]+1, (w+p[2]+p[3]-a.Kernel[1])/s[1]+1
	y := tensor.Zeros(tensor.Float64, n, c, oh, ow)
	for pl := 0; pl < n*c; pl++ {
		for yi := 0; yi < oh; yi++ {
			for xi := 0; xi < ow; xi++ {
				best, sum, cnt := 0.0, 0.0, 0
				for i := 0; i < a.Kernel[0]; i++ {
					for j := 0; j < a.Kernel[1]; j++ {
						ih, iw := yi*s[0]-p[0]+i, xi*s[1]-p[2]+j
						if ih < 0 || ih >= h || iw < 0 || iw >= w {
							continue
						}
						v := x.At((pl*h+ih)*w + iw)
						if cnt == 0 || v > best {
							best = v
						}
						sum += v
						cnt++
					}
				}
				if !isMax {
					best = sum / float64(cnt)
				}
				y.Float64s()[(pl*oh+yi)*ow+xi] = best
			}
		}
	}
	return y
}

func TestPool2DMatchesNaive(t *testing.T) {
	for i, c := range poolCases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(uint64(800+i), c.n, c.c, c.h, c.w)
			got, err := MaxPool2D(x, c.a)
			require.NoError(t, err)
			requireClose(t, naivePool(t, x, c.a, true), got, 0, 0)
			got, err = AvgPool2D(x, c.a)
			require.NoError(t, err)
			requireClose(t, naivePool(t, x, c.a, false), got, 1e-14, 1e-14)
			checkDTypes(t, func() Op { return MaxPool2DOp(c.a) }, x)
			checkDTypes(t, func() Op { return AvgPool2DOp(c.a) }, x)
		})
	}
}

func TestMaxPool2DTieGoesToFirst(t *testing.T) {
	x := tensor.MustFromSlice([]float64{
		1, 3, 3,
		3, 2, 3,
		0, 3, 1,
	}, 1, 1, 3, 3)
	op := MaxPool2DOp(Pool2DAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}})
	y, err := op.Forward(ins(x))
	require.NoError(t, err)
	require.Equal(t, []float64{3, 3, 3, 3}, y.Float64s())
	g, err := op.Backward(ins(x), y, tensor.MustFromSlice([]float64{1, 10, 100, 1000}, 1, 1, 2, 2), []bool{true})
	require.NoError(t, err)
	require.Equal(t, []float64{
		0, 11, 0,
		100, 0, 1000,
		0, 0, 0,
	}, g[0].Float64s())
}

func TestAvgPool2DExcludesPadding(t *testing.T) {
	x := tensor.MustFromSlice([]float64{1, 2, 3, 4}, 1, 1, 2, 2)
	// SAME with a 3x3 kernel at stride 1 pads 1 on every side: each window
	// holds all four cells, so every output is their mean, never diluted by
	// padded zeros.
	y, err := AvgPool2D(x, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: PadSame})
	require.NoError(t, err)
	require.Equal(t, []float64{2.5, 2.5, 2.5, 2.5}, y.Float64s())
	// Padded cells never win a max, even over negative inputs.
	y, err = MaxPool2D(tensor.MustFromSlice([]float64{-4, -3, -2, -1}, 1, 1, 2, 2), Pool2DAttrs{Kernel: [2]int{2, 2}, Pad: [4]int{1, 1, 1, 1}})
	require.NoError(t, err)
	require.Equal(t, []float64{-4, -3, -2, -1}, y.Float64s())
}

func TestGlobalAvgPool2D(t *testing.T) {
	x := randn(60, 2, 3, 4, 5)
	got, err := GlobalAvgPool2D(x)
	require.NoError(t, err)
	want := tensor.Zeros(tensor.Float64, 2, 3)
	for i := range 6 {
		s := 0.0
		for j := range 20 {
			s += x.At(i*20 + j)
		}
		want.Float64s()[i] = s / 20
	}
	requireClose(t, want, got, 1e-15, 1e-14)
	checkDTypes(t, GlobalAvgPool2DOp, x)
}

func TestPool2DErrors(t *testing.T) {
	z := func(shape ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, shape...) }
	k3 := [2]int{3, 3}
	cases := []struct {
		name string
		x    *tensor.Tensor
		a    Pool2DAttrs
		want string
	}{
		{"rank", z(2, 4, 4), Pool2DAttrs{Kernel: k3}, "max_pool2d: inputs float32[2 4 4]: want x [N, C, H, W]"},
		{"no_kernel", z(1, 1, 4, 4), Pool2DAttrs{}, "max_pool2d: inputs float32[1 1 4 4]: want a positive kernel and non-negative stride (0 means the kernel), got kernel [0 0], stride [0 0]"},
		{"negative_stride", z(1, 1, 4, 4), Pool2DAttrs{Kernel: k3, Stride: [2]int{1, -1}}, "non-negative stride"},
		{"pad_not_below_kernel", z(1, 1, 4, 4), Pool2DAttrs{Kernel: k3, Pad: [4]int{0, 3, 0, 0}}, "padding [0 3 0 0] must be below the kernel [3 3]"},
		{"kernel_too_big", z(1, 1, 2, 4), Pool2DAttrs{Kernel: [2]int{4, 2}}, "max_pool2d: inputs float32[1 1 2 4]: kernel [4 2] is larger than the padded input 2x4"},
		{"same_with_pad", z(1, 1, 4, 4), Pool2DAttrs{Kernel: k3, Padding: PadSame, Pad: [4]int{1, 1, 1, 1}}, "padding mode same takes no explicit Pad"},
		{"ints", tensor.Zeros(tensor.Int32, 1, 1, 4, 4), Pool2DAttrs{Kernel: k3}, "want float32 or float64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := MaxPool2D(c.x, c.a)
			require.ErrorContains(t, err, c.want)
			_, err = AvgPool2D(c.x, c.a)
			require.Error(t, err)
		})
	}
	_, err := AvgPool2D(z(1, 1, 4), Pool2DAttrs{Kernel: k3})
	require.ErrorContains(t, err, "avg_pool2d: inputs float32[1 1 4]")
	_, err = GlobalAvgPool2D(z(1, 2, 0, 3))
	require.ErrorContains(t, err, "global_avg_pool2d: inputs float32[1 2 0 3]: want x [N, C, H, W] with H, W >= 1")
}

// The reference pool kernels: one call per window, in output order, that
// the kernels of pool.go must equal bit for bit.

// eachWindow calls fn for output cell o of every plane with the flat
// offset base of its input plane and the window's rows [h0, h1) and
// columns [w0, w1), clipped to the image.
func eachWindow(g im2col.Geom, fn func(o, base, h0, h1, w0, w1 int)) {
	o := 0
	for c := 0; c < g.C; c++ {
		for oh := 0; oh < g.OH; oh++ {
			h := oh*g.SH - g.PT
			for ow := 0; ow < g.OW; ow++ {
				w := ow*g.SW - g.PL
				fn(o, c*g.H*g.W, max(h, 0), min(h+g.KH, g.H), max(w, 0), min(w+g.KW, g.W))
				o++
			}
		}
	}
}

func poolReference[T tensor.Float](g im2col.Geom, arg []int, x, y []T) {
	eachWindow(g, func(o, base, h0, h1, w0, w1 int) {
		if arg != nil {
			at := base + h0*g.W + w0
			for i := h0; i < h1; i++ {
				for j := base + i*g.W + w0; j < base+i*g.W+w1; j++ {
					if x[j] > x[at] {
						at = j
					}
				}
			}
			y[o], arg[o] = x[at], at
			return
		}
		var s T
		for i := h0; i < h1; i++ {
			for _, v := range x[base+i*g.W+w0 : base+i*g.W+w1] {
				s += v
			}
		}
		y[o] = s / T((h1-h0)*(w1-w0))
	})
}

func poolGradReference[T tensor.Float](g im2col.Geom, arg []int, dy, dx []T) {
	if arg != nil {
		for o, at := range arg {
			dx[at] += dy[o]
		}
		return
	}
	eachWindow(g, func(o, base, h0, h1, w0, w1 int) {
		d := dy[o] / T((h1-h0)*(w1-w0))
		for i := h0; i < h1; i++ {
			row := dx[base+i*g.W+w0 : base+i*g.W+w1]
			for j := range row {
				row[j] += d
			}
		}
	})
}

// poolFastCases have odd sizes (1, 3, 17, 127, 513), ties, windows
// clipped by padding on every side, strides above the window, and 2×2
// stride-2 pools on even and odd images (the unrolled path, and the
// general one when SAME pads the last window).
var poolFastCases = []struct {
	name       string
	n, c, h, w int
	a          Pool2DAttrs
}{
	{"2x2_even", 3, 17, 24, 24, Pool2DAttrs{Kernel: [2]int{2, 2}}},
	{"2x2_odd_valid", 1, 3, 127, 17, Pool2DAttrs{Kernel: [2]int{2, 2}}},
	{"2x2_four_windows", 2, 5, 8, 8, Pool2DAttrs{Kernel: [2]int{2, 2}}},
	{"2x2_eight_four_one", 1, 3, 6, 26, Pool2DAttrs{Kernel: [2]int{2, 2}}},
	{"2x2_odd_same", 2, 3, 17, 127, Pool2DAttrs{Kernel: [2]int{2, 2}, Padding: PadSame}},
	{"3x3_s2_same", 1, 17, 17, 17, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: PadSame}},
	{"row_513", 1, 1, 1, 513, Pool2DAttrs{Kernel: [2]int{1, 3}, Stride: [2]int{1, 1}, Pad: [4]int{0, 0, 1, 2}}},
	{"one", 1, 1, 1, 1, Pool2DAttrs{Kernel: [2]int{1, 1}}},
	{"stride_over_window", 2, 3, 13, 11, Pool2DAttrs{Kernel: [2]int{2, 3}, Stride: [2]int{4, 5}, Pad: [4]int{1, 0, 2, 1}}},
}

func TestPoolKernelsMatchReference(t *testing.T) {
	for i, c := range poolFastCases {
		t.Run(c.name, func(t *testing.T) {
			x := randn(uint64(900+i), c.n, c.c, c.h, c.w)
			xs := x.Float64s()
			for j := 0; j < len(xs); j += 7 {
				xs[j] = xs[j/2] // ties
			}
			for j := 3; j < len(xs); j += 13 {
				xs[j] = math.Copysign(0, float64(j%2)-0.5) // −0 and +0, equal but told apart by their bits
			}
			for j := 5; j < len(xs); j += 29 {
				xs[j] = math.NaN() // never replaces a maximum, and stays one when first
			}
			for _, isMax := range []bool{true, false} {
				o := &pool2dOp{max: isMax, attrs: c.a}
				_, g, err := o.geom(ins(x))
				require.NoError(t, err)
				t.Run("float64", func(t *testing.T) { checkPoolKernels(t, g, isMax, xs) })
				t.Run("float32", func(t *testing.T) { checkPoolKernels(t, g, isMax, f32(x).Float32s()) })
			}
		})
	}
}

func checkPoolKernels[T tensor.Float](t *testing.T, g im2col.Geom, isMax bool, x []T) {
	outs := g.C * g.OH * g.OW
	var argW, argG []int
	if isMax {
		argW, argG = make([]int, outs), make([]int, outs)
	}
	want, got := make([]T, outs), make([]T, outs)
	poolReference(g, argW, x, want)
	poolKernel(g, argG, x, got)
	requireSameBits(t, want, got)
	require.Equal(t, argW, argG)
	dy := make([]T, outs)
	for j := range dy {
		dy[j] = T(j%13) - 6.5
	}
	dxW, dxG := make([]T, len(x)), make([]T, len(x))
	poolGradReference(g, argW, dy, dxW)
	poolGrad(g, argG, dy, dxG)
	requireSameBits(t, dxW, dxG)
}

// requireSameBits requires want and got to hold the same bit patterns (NaN
// equal to NaN, −0 not equal to +0).
func requireSameBits[T tensor.Float](t *testing.T, want, got []T) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		require.Equal(t, math.Float64bits(w), math.Float64bits(g), "[%d]: want %v, got %v", i, w, g)
	}
}

// BenchmarkPool2D times the max and average pool kernels, forward plus
// backward in float32, on the MNIST CNN's pools (batch 64) and a 3×3
// stride-2 SAME pool, and after each step (timer stopped) the reference
// kernels on the same input; speedup is the reference's time over the
// kernels'.
func BenchmarkPool2D(b *testing.B) {
	for _, c := range []struct {
		name       string
		n, c, h, w int
		a          Pool2DAttrs
	}{
		{"2x2_64x20x24x24", 64, 20, 24, 24, Pool2DAttrs{Kernel: [2]int{2, 2}}},
		{"2x2_64x50x8x8", 64, 50, 8, 8, Pool2DAttrs{Kernel: [2]int{2, 2}}},
		{"3x3_s2_same_128x16x32x32", 128, 16, 32, 32, Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: PadSame}},
	} {
		for _, isMax := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s_max%v", c.name, isMax), func(b *testing.B) {
				x := f32(randn(1, c.n, c.c, c.h, c.w)).Float32s()
				o := &pool2dOp{max: isMax, attrs: c.a}
				_, g, err := o.geom(ins(f32(randn(1, c.n, c.c, c.h, c.w))))
				if err != nil {
					b.Fatal(err)
				}
				outs := g.C * g.OH * g.OW
				var arg []int
				if isMax {
					arg = make([]int, outs)
				}
				y, dx := make([]float32, outs), make([]float32, len(x))
				var ref time.Duration
				for b.Loop() {
					poolKernel(g, arg, x, y)
					poolGrad(g, arg, y, dx)
					b.StopTimer()
					start := time.Now()
					poolReference(g, arg, x, y)
					poolGradReference(g, arg, y, dx)
					ref += time.Since(start)
					b.StartTimer()
				}
				b.ReportMetric(ref.Seconds()/b.Elapsed().Seconds(), "speedup")
			})
		}
	}
}
