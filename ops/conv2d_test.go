package ops

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("conv2d",
	gradCase{name: "bias_pad1", attrs: Attrs{Pads: [4]int{1, 1, 1, 1}},
		in: ins(randn(1, 2, 3, 5, 5), randn(2, 4, 3, 3, 3), randn(3, 4)), wrt: []int{0, 1, 2}},
	gradCase{name: "groups2_stride_dilation_asym", attrs: Attrs{Strides: [2]int{2, 1}, Dilations: [2]int{2, 1}, Pads: [4]int{1, 0, 2, 1}, Groups: 2}, in: ins(randn(4, 1, 4, 7, 6), randn(5, 4, 2, 2, 3)), wrt: []int{0, 1}},
	gradCase{name: "shared_grid_1x3_same", attrs: Attrs{Padding: PadSame},
		in: ins(randn(9, 2, 11, 2, 12), randn(10, 11, 11, 1, 3), randn(11, 11)), wrt: []int{0, 1, 2}},
	gradCase{name: "depthwise_same_stride2", attrs: Attrs{Strides: [2]int{2, 2}, Padding: PadSame, Groups: 3}, in: ins(randn(6, 2, 3, 5, 4), randn(7, 3, 1, 3, 3), randn(8, 3)), wrt: []int{0, 1, 2}},
)

// convCase is one convolution shape: x [n, c, h, w], w [o, c/groups, kh, kw].
type convCase struct {
	name                  string
	n, c, h, w, o, kh, kw int
	a                     Conv2DAttrs
}

var convCases = []convCase{
	{"basic", 1, 1, 5, 5, 1, 3, 3, Conv2DAttrs{}},
	{"stride2_same_batch3", 3, 3, 7, 9, 4, 3, 3, Conv2DAttrs{Stride: [2]int{2, 2}, Padding: PadSame}},
	{"dilation2", 2, 2, 9, 8, 3, 3, 3, Conv2DAttrs{Dilation: [2]int{2, 2}}},
	{"explicit_asym", 1, 2, 6, 5, 2, 3, 2, Conv2DAttrs{Stride: [2]int{2, 1}, Pad: [4]int{1, 2, 0, 3}}},
	{"groups2", 3, 4, 6, 6, 6, 3, 3, Conv2DAttrs{Pad: [4]int{1, 1, 1, 1}, Groups: 2}},
	{"depthwise_x2", 2, 3, 7, 7, 6, 3, 3, Conv2DAttrs{Stride: [2]int{2, 2}, Padding: PadSame, Groups: 3}},
	{"pointwise", 3, 5, 4, 4, 3, 1, 1, Conv2DAttrs{}},
	{"kernel_over_stride", 1, 2, 11, 11, 3, 5, 5, Conv2DAttrs{Stride: [2]int{2, 2}, Pad: [4]int{2, 2, 2, 2}}},
	{"stride_over_kernel", 2, 2, 10, 10, 2, 2, 2, Conv2DAttrs{Stride: [2]int{3, 3}}},
	{"odd_row", 1, 3, 1, 13, 2, 1, 3, Conv2DAttrs{Stride: [2]int{1, 2}, Padding: PadSame}},
	{"same_dilated_strided", 3, 2, 9, 7, 4, 3, 2, Conv2DAttrs{Stride: [2]int{2, 3}, Dilation: [2]int{2, 2}, Padding: PadSame}},
	{"valid_mode", 1, 2, 6, 7, 2, 4, 3, Conv2DAttrs{Padding: PadValid}},
	{"kernel_is_image", 2, 3, 4, 5, 2, 4, 5, Conv2DAttrs{}},
	{"pad_only_right_groups", 3, 6, 5, 5, 3, 2, 2, Conv2DAttrs{Pad: [4]int{0, 0, 0, 1}, Groups: 3, Stride: [2]int{1, 2}}},
}

// testPad resolves a's padding for a conv of an h×w input, with defaults
// applied, for the reference implementations.
func testPad(t *testing.T, a Conv2DAttrs, h, w, kh, kw int) (stride, dil [2]int, pad [4]int, groups int) {
	t.Helper()
	stride, dil, pad, groups = a.Stride, a.Dilation, a.Pad, max(a.Groups, 1)
	for i := range 2 {
		stride[i], dil[i] = max(stride[i], 1), max(dil[i], 1)
	}
	if a.Padding == PadSame {
		var err error
		pad, err = SamePadding(h, w, kh, kw, stride[0], stride[1], dil[0], dil[1])
		require.NoError(t, err)
	}
	return stride, dil, pad, groups
}

// naiveConv2D is the textbook seven-loop convolution, the independent
// reference for the im2col kernel; b may be nil.
func naiveConv2D(t *testing.T, x, w, b *tensor.Tensor, a Conv2DAttrs) *tensor.Tensor {
	n, c, h, wd := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	o, cg, kh, kw := w.Dim(0), w.Dim(1), w.Dim(2), w.Dim(3)
	s, d, p, g := testPad(t, a, h, wd, kh, kw)
	oh := (h+p[0]+p[1]-(kh-1)*d[0]-1)/s[0] + 1
	ow := (wd+p[2]+p[3]-(kw-1)*d[1]-1)/s[1] + 1
	y := tensor.Zeros(tensor.Float64, n, o, oh, ow)
	for ni := 0; ni < n; ni++ {
		for oc := 0; oc < o; oc++ {
			for yi := 0; yi < oh; yi++ {
				for xi := 0; xi < ow; xi++ {
					sum := 0.0
					if b != nil {
						sum = b.At(oc)
					}
					for ci := 0; ci < cg; ci++ {
						for i := 0; i < kh; i++ {
							for j := 0; j < kw; j++ {
								ih, iw := yi*s[0]-p[0]+i*d[0], xi*s[1]-p[2]+j*d[1]
								if ih < 0 || ih >= h || iw < 0 || iw >= wd {
									continue
								}
								ic := oc/(o/g)*cg + ci
								sum += x.At(((ni*c+ic)*h+ih)*wd+iw) * w.At(((oc*cg+ci)*kh+i)*kw+j)
							}
						}
					}
					y.Float64s()[((ni*o+oc)*oh+yi)*ow+xi] = sum
				}
			}
		}
	}
	return y
}

func TestConv2DMatchesNaive(t *testing.T) {
	for i, c := range convCases {
		t.Run(c.name, func(t *testing.T) {
			g := max(c.a.Groups, 1)
			x := randn(uint64(100+i), c.n, c.c, c.h, c.w)
			w := randn(uint64(200+i), c.o, c.c/g, c.kh, c.kw)
			b := randn(uint64(300+i), c.o)
			got, err := Conv2D(x, w, b, c.a)
			require.NoError(t, err)
			requireClose(t, naiveConv2D(t, x, w, b, c.a), got, 1e-12, 1e-12)
			got, err = Conv2D(x, w, nil, c.a)
			require.NoError(t, err)
			requireClose(t, naiveConv2D(t, x, w, nil, c.a), got, 1e-12, 1e-12)
			checkDTypes(t, func() Op { return Conv2DOp(c.a) }, x, w, b)
		})
	}
}

func TestSamePadding(t *testing.T) {
	// Values from TF's SAME rule (tf.nn.conv2d's padding docs).
	cases := []struct{ in, k, s, d, out, before, after int }{
		{5, 3, 2, 1, 3, 1, 1},
		{4, 3, 2, 1, 2, 0, 1},
		{7, 1, 3, 1, 3, 0, 0},
		{28, 5, 1, 1, 28, 2, 2},
		{6, 2, 2, 1, 3, 0, 0},
		{10, 4, 1, 1, 10, 1, 2},
		{5, 3, 1, 2, 5, 2, 2},
		{2, 5, 1, 1, 2, 2, 2},
		{1, 3, 2, 1, 1, 1, 1},
		{8, 3, 3, 2, 3, 1, 2},
	}
	for i, c := range cases {
		v := cases[(i+1)%len(cases)] // the width axis takes the next case
		t.Run(fmt.Sprintf("in%d_k%d_s%d_d%d", c.in, c.k, c.s, c.d), func(t *testing.T) {
			p, err := SamePadding(c.in, v.in, c.k, v.k, c.s, v.s, c.d, v.d)
			require.NoError(t, err)
			require.Equal(t, [4]int{c.before, c.after, v.before, v.after}, p)
			out, ok := windowsOut(c.in, p[0], p[1], (c.k-1)*c.d+1, c.s)
			require.True(t, ok)
			require.Equal(t, c.out, out)
		})
	}
	_, err := SamePadding(5, 5, 3, 3, 0, 1, 1, 1)
	require.ErrorContains(t, err, "SamePadding: want positive sizes; got input 5x5, kernel 3x3, stride 0x1")
}

func TestConv2DErrors(t *testing.T) {
	z := func(shape ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, shape...) }
	cases := []struct {
		name string
		in   []*tensor.Tensor
		a    Conv2DAttrs
		want string
	}{
		{"rank", ins(z(3, 5, 5), z(2, 3, 3, 3)), Conv2DAttrs{}, "conv2d: inputs float32[3 5 5], float32[2 3 3 3]: want x [N, C, H, W] and w [O, C/groups, KH, KW]"},
		{"channels", ins(z(1, 3, 5, 5), z(2, 4, 3, 3)), Conv2DAttrs{}, "conv2d: inputs float32[1 3 5 5], float32[2 4 3 3]: with groups 1 want C and O divisible by it and w [O, 3, KH, KW]"},
		{"groups_divide_c", ins(z(1, 3, 5, 5), z(2, 1, 3, 3)), Conv2DAttrs{Groups: 2}, "with groups 2 want C and O divisible by it"},
		{"groups_divide_o", ins(z(1, 4, 5, 5), z(3, 2, 3, 3)), Conv2DAttrs{Groups: 2}, "with groups 2 want C and O divisible by it"},
		{"kernel_too_big", ins(z(1, 1, 4, 4), z(1, 1, 3, 3)), Conv2DAttrs{Dilation: [2]int{2, 2}}, "conv2d: inputs float32[1 1 4 4], float32[1 1 3 3]: dilated kernel 5x5 is larger than the padded input 4x4"},
		{"negative_stride", ins(z(1, 1, 4, 4), z(1, 1, 3, 3)), Conv2DAttrs{Stride: [2]int{-1, 1}}, "stride [-1 1], dilation [0 0] and groups 0 must be positive (0 means 1)"},
		{"negative_pad", ins(z(1, 1, 4, 4), z(1, 1, 3, 3)), Conv2DAttrs{Pad: [4]int{0, -1, 0, 0}}, "negative padding [0 -1 0 0]"},
		{"same_with_pad", ins(z(1, 1, 4, 4), z(1, 1, 3, 3)), Conv2DAttrs{Padding: PadSame, Pad: [4]int{1, 1, 1, 1}}, "padding mode same takes no explicit Pad"},
		{"bad_mode", ins(z(1, 1, 4, 4), z(1, 1, 3, 3)), Conv2DAttrs{Padding: 7}, "unknown padding mode PadMode(7)"},
		{"bias", ins(z(1, 1, 4, 4), z(2, 1, 3, 3), z(3)), Conv2DAttrs{}, "conv2d: inputs float32[1 1 4 4], float32[2 1 3 3], float32[3]: want bias [2]"},
		{"empty_kernel", ins(z(1, 1, 4, 4), z(2, 1, 0, 3)), Conv2DAttrs{}, "want a kernel of at least 1x1"},
		{"dtypes", ins(z(1, 1, 4, 4), tensor.Zeros(tensor.Float64, 1, 1, 3, 3)), Conv2DAttrs{}, "one dtype"},
		{"arity", ins(z(1, 1, 4, 4)), Conv2DAttrs{}, "want inputs x, w and optional b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Conv2DOp(c.a).Forward(c.in)
			require.ErrorContains(t, err, c.want)
		})
	}
}

// BenchmarkConv2D times forward plus backward (weight, bias and, past the
// first layer, input gradients) of the two convolutions of the MNIST CNN
// at batch 64 in float32, and reports GFLOP/s counting 2 flops per
// multiply-add of the forward pass and twice that for the backward pass.
func BenchmarkConv2D(b *testing.B) {
	for _, c := range []struct {
		name           string
		c, h, o, k     int
		needInputGrads bool
	}{
		{"1to20_5x5_28x28", 1, 28, 20, 5, false},
		{"20to50_5x5_12x12", 20, 12, 50, 5, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			x := f32(randn(1, 64, c.c, c.h, c.h))
			w := f32(randn(2, c.o, c.c, c.k, c.k))
			bias := f32(randn(3, c.o))
			oh := c.h - c.k + 1
			macs := float64(64 * c.o * oh * oh * c.c * c.k * c.k)
			passes := 2.0 // forward and weight gradient
			if c.needInputGrads {
				passes = 3
			}
			for b.Loop() {
				op := Conv2DOp(Conv2DAttrs{})
				y, err := op.Forward(ins(x, w, bias))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := op.Backward(ins(x, w, bias), y, y, []bool{c.needInputGrads, true, true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(2*macs*passes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConv2DResNet times forward plus backward (input, filter and bias
// gradients) of the 3×3 SAME convolutions of ResNet-32 on CIFAR-10 (batch
// 128; 16, 32 and 64 channels at 32², 16² and 8², and the stride-2
// transitions between them). After each step, with the timer stopped, it
// times two references on the same load: the GEMM alone on the forward
// pass's im2col product for one image (cout × OH·OW × C·9) run as many
// times as the step's three passes over the batch (gemm_GFLOP/s), and a
// 1024³ float32 GEMM (sgemm1024_GFLOP/s) run for about as many flops as
// the step; of_gemm and of_sgemm1024 are the convolution's rate over each.
// Each step gives its output and gradients back to the pool, as
// graph.Tape.Release does between training steps, so that the next step
// takes pooled storage instead of fresh memory the runtime must zero.
func BenchmarkConv2DResNet(b *testing.B) {
	const n, big = 128, 1024
	// Random operands: fresh make()s would all read the kernel's shared
	// zero page, which slows this GEMM and so would inflate
	// of_sgemm1024.
	a1, a2, a3 := f32(randn(4, big, big)).Float32s(), f32(randn(5, big, big)).Float32s(), make([]float32, big*big)
	for _, c := range []struct {
		c, h, o, stride int
	}{
		{16, 32, 16, 1}, {16, 32, 32, 2}, {32, 16, 32, 1}, {32, 16, 64, 2}, {64, 8, 64, 1},
	} {
		b.Run(fmt.Sprintf("%dto%d_%dx%d_s%d", c.c, c.o, c.h, c.h, c.stride), func(b *testing.B) {
			x := f32(randn(1, n, c.c, c.h, c.h))
			w := f32(randn(2, c.o, c.c, 3, 3))
			bias := f32(randn(3, c.o))
			op := Conv2DOp(Conv2DAttrs{Stride: [2]int{c.stride, c.stride}, Padding: PadSame})
			oh := c.h / c.stride
			m, p, k := c.o, oh*oh, c.c*9
			flops := 3 * 2 * float64(n*m*p*k) // forward, input and filter gradients
			wm, col, out := make([]float32, m*k), make([]float32, k*p), make([]float32, m*p)
			reps := max(1, int(flops/(2*big*big*big)+0.5))
			var gemmTime, bigTime time.Duration
			var r tensor.Recycler
			for b.Loop() {
				y, err := op.Forward(ins(x, w, bias))
				if err != nil {
					b.Fatal(err)
				}
				grads, err := op.Backward(ins(x, w, bias), y, y, []bool{true, true, true})
				if err != nil {
					b.Fatal(err)
				}
				r.Add(y)
				for _, g := range grads {
					r.Add(g)
				}
				r.Flush()
				b.StopTimer()
				start := time.Now()
				for range 3 * n {
					gemm.Gemm(false, false, m, p, k, 1, wm, k, col, p, 0, out, p)
				}
				gemmTime += time.Since(start)
				start = time.Now()
				for range reps {
					gemm.Gemm(false, false, big, big, big, 1, a1, big, a2, big, 0, a3, big)
				}
				bigTime += time.Since(start)
				b.StartTimer()
			}
			conv := flops * float64(b.N) / b.Elapsed().Seconds() / 1e9
			g := flops * float64(b.N) / gemmTime.Seconds() / 1e9
			sg := 2 * big * big * big * float64(reps*b.N) / bigTime.Seconds() / 1e9
			b.ReportMetric(conv, "GFLOP/s")
			b.ReportMetric(g, "gemm_GFLOP/s")
			b.ReportMetric(conv/g, "of_gemm")
			b.ReportMetric(sg, "sgemm1024_GFLOP/s")
			b.ReportMetric(conv/sg, "of_sgemm1024")
		})
	}
}

// BenchmarkConv2DResNet32 times forward plus backward of all 31
// convolutions of ResNet-32 on CIFAR-10 in one step (He et al. 2016, §4.2:
// a 3→16 stem, then 5 blocks of two 3×3 convolutions at each of 16, 32 and
// 64 channels, the first of the second and third stages at stride 2; the
// shortcuts are identities, option A, with no convolution), batch 128,
// float32: the whole network's convolution rate, each layer weighted by
// its share of the flops. The stem computes no input gradient, as in
// training. Tensors go back to the pool after each step, and the same run
// times the 1024³ SGEMM for about as many flops (of_sgemm1024, as in
// BenchmarkConv2DResNet).
func BenchmarkConv2DResNet32(b *testing.B) {
	const n, big = 128, 1024
	type layer struct {
		op      Op
		x, w, b *tensor.Tensor
		dx      bool
	}
	var layers []layer
	var flops float64
	add := func(times, c, h, o, stride int) {
		x, w, bias := f32(randn(1, n, c, h, h)), f32(randn(2, o, c, 3, 3)), f32(randn(3, o))
		oh := h / stride
		for range times {
			l := layer{Conv2DOp(Conv2DAttrs{Stride: [2]int{stride, stride}, Padding: PadSame}), x, w, bias, c != 3}
			layers = append(layers, l)
			passes := 3.0
			if !l.dx {
				passes = 2
			}
			flops += passes * 2 * float64(n*o*oh*oh*c*9)
		}
	}
	add(1, 3, 32, 16, 1)
	add(10, 16, 32, 16, 1)
	add(1, 16, 32, 32, 2)
	add(9, 32, 16, 32, 1)
	add(1, 32, 16, 64, 2)
	add(9, 64, 8, 64, 1)
	a1, a2, a3 := f32(randn(4, big, big)).Float32s(), f32(randn(5, big, big)).Float32s(), make([]float32, big*big)
	reps := max(1, int(flops/(2*big*big*big)+0.5))
	var bigTime time.Duration
	var r tensor.Recycler
	for b.Loop() {
		for _, l := range layers {
			y, err := l.op.Forward(ins(l.x, l.w, l.b))
			if err != nil {
				b.Fatal(err)
			}
			grads, err := l.op.Backward(ins(l.x, l.w, l.b), y, y, []bool{l.dx, true, true})
			if err != nil {
				b.Fatal(err)
			}
			r.Add(y)
			for _, g := range grads {
				r.Add(g)
			}
			r.Flush()
		}
		b.StopTimer()
		start := time.Now()
		for range reps {
			gemm.Gemm(false, false, big, big, big, 1, a1, big, a2, big, 0, a3, big)
		}
		bigTime += time.Since(start)
		b.StartTimer()
	}
	conv := flops * float64(b.N) / b.Elapsed().Seconds() / 1e9
	sg := 2 * big * big * big * float64(reps*b.N) / bigTime.Seconds() / 1e9
	b.ReportMetric(conv, "GFLOP/s")
	b.ReportMetric(sg, "sgemm1024_GFLOP/s")
	b.ReportMetric(conv/sg, "of_sgemm1024")
}

// TestConvOutputsFromDirtyPool runs conv2d and conv2d_transpose, forward
// and backward, once on a fresh pool and once after filling the pool with
// NaN tensors of every output's size, and wants the same results: outputs
// allocated uninitialized (zerosOrEmpty) must be written whole, and those
// the kernels add into must still be zeroed. The cases cover a layer whose
// data gradient is written whole (SAME, stride 2) and one whose last row
// and column no window reads (VALID, stride 2), each ungrouped with enough
// channels for the channels-last kernels.
func TestConvOutputsFromDirtyPool(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Conv2DAttrs
	}{
		{"same_stride2", Conv2DAttrs{Stride: [2]int{2, 2}, Padding: PadSame}},
		{"valid_stride2_short", Conv2DAttrs{Stride: [2]int{2, 2}}},
	} {
		for _, transposed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/transposed=%v", c.name, transposed), func(t *testing.T) {
				newOp := func() Op { return Conv2DOp(c.a) }
				x, w := f32(randn(31, 3, 8, 11, 10)), f32(randn(32, 12, 8, 3, 3))
				if transposed {
					newOp = func() Op { return Conv2DTransposeOp(Conv2DTransposeAttrs{Conv2DAttrs: c.a}) }
					x, w = f32(randn(31, 3, 12, 5, 4)), f32(randn(32, 12, 8, 3, 3))
				}
				b := f32(randn(33, w.Shape()[0]))
				if transposed {
					b = f32(randn(33, w.Shape()[1]))
				}
				run := func() []*tensor.Tensor {
					op := newOp()
					y, err := op.Forward(ins(x, w, b))
					require.NoError(t, err)
					g, err := op.Backward(ins(x, w, b), y, y, []bool{true, true, true})
					require.NoError(t, err)
					return append([]*tensor.Tensor{y}, g...)
				}
				want := run()
				var r tensor.Recycler
				for _, o := range want {
					for range 4 {
						nan, err := tensor.Full(tensor.Float32, math.NaN(), o.Shape()...)
						require.NoError(t, err)
						r.Add(nan)
					}
				}
				require.Positive(t, r.Flush())
				for i, got := range run() {
					require.Equal(t, want[i].Float32s(), got.Float32s(), "output %d", i)
				}
			})
		}
	}
}

// BenchmarkConv2DPasses times each pass of the 3×3 stride-1 SAME layers of
// ResNet-32's three stages (batch 128, float32) on its own: the forward
// pass with bias, the data gradient, and the filter and bias gradients.
func BenchmarkConv2DPasses(b *testing.B) {
	const n = 128
	for _, c := range []struct{ c, h int }{{16, 32}, {32, 16}, {64, 8}} {
		x, w, bias := f32(randn(1, n, c.c, c.h, c.h)), f32(randn(2, c.c, c.c, 3, 3)), f32(randn(3, c.c))
		op := Conv2DOp(Conv2DAttrs{Padding: PadSame})
		y, err := op.Forward(ins(x, w, bias))
		require.NoError(b, err)
		for _, pass := range []struct {
			name string
			need []bool
		}{{"forward", nil}, {"data", []bool{true, false, false}}, {"filter", []bool{false, true, true}}} {
			b.Run(fmt.Sprintf("c%d_%dx%d/%s", c.c, c.h, c.h, pass.name), func(b *testing.B) {
				var r tensor.Recycler
				for b.Loop() {
					var outs []*tensor.Tensor
					if pass.need == nil {
						out, err := op.Forward(ins(x, w, bias))
						require.NoError(b, err)
						outs = append(outs, out)
					} else {
						outs, err = op.Backward(ins(x, w, bias), y, y, pass.need)
						require.NoError(b, err)
					}
					for _, t := range outs {
						if t != nil {
							r.Add(t)
						}
					}
					r.Flush()
				}
				b.ReportMetric(2*float64(n*c.c*c.c*9*c.h*c.h)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
