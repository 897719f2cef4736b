package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("conv2d_transpose",
	gradCase{name: "stride2_outpad_bias", attrs: Attrs{Strides: [2]int{2, 2}, Pads: [4]int{1, 1, 1, 1}, OutputPadding: [2]int{1, 0}}, in: ins(randn(11, 2, 3, 3, 3), randn(12, 3, 2, 3, 3), randn(13, 2)), wrt: []int{0, 1, 2}},
	gradCase{name: "groups2_dilation_asym", attrs: Attrs{Dilations: [2]int{2, 1}, Pads: [4]int{0, 2, 1, 0}, Groups: 2}, in: ins(randn(14, 1, 4, 3, 4), randn(15, 4, 1, 2, 3)), wrt: []int{0, 1}},
	gradCase{name: "same_stride2", attrs: Attrs{Strides: [2]int{2, 2}, Padding: PadSame}, in: ins(randn(16, 2, 2, 3, 2), randn(17, 2, 3, 3, 3), randn(18, 3)), wrt: []int{0, 1, 2}},
)

// convTCase is one transposed-convolution shape: x [n, c, h, w],
// w [c, o/groups, kh, kw].
type convTCase struct {
	name                  string
	n, c, h, w, o, kh, kw int
	a                     Conv2DTransposeAttrs
}

func convT(stride, dil [2]int, pad [4]int, mode PadMode, groups int, opad [2]int) Conv2DTransposeAttrs {
	return Conv2DTransposeAttrs{Conv2DAttrs: Conv2DAttrs{Stride: stride, Dilation: dil, Pad: pad, Padding: mode, Groups: groups}, OutputPadding: opad}
}

var convTCases = []convTCase{
	{"basic", 1, 1, 3, 3, 1, 3, 3, Conv2DTransposeAttrs{}},
	{"stride2_outpad_batch3", 3, 2, 4, 5, 3, 3, 3, convT([2]int{2, 2}, [2]int{}, [4]int{1, 1, 1, 1}, PadExplicit, 1, [2]int{1, 1})},
	{"dilation2", 2, 3, 4, 4, 2, 3, 3, convT([2]int{}, [2]int{2, 2}, [4]int{}, PadExplicit, 1, [2]int{})},
	{"explicit_asym", 1, 2, 5, 4, 3, 3, 2, convT([2]int{2, 1}, [2]int{}, [4]int{0, 2, 1, 0}, PadExplicit, 1, [2]int{1, 0})},
	{"groups2", 3, 4, 3, 3, 6, 3, 3, convT([2]int{2, 2}, [2]int{}, [4]int{1, 1, 1, 1}, PadExplicit, 2, [2]int{})},
	{"depthwise", 2, 3, 4, 4, 3, 3, 3, convT([2]int{2, 2}, [2]int{}, [4]int{}, PadSame, 3, [2]int{})},
	{"same_stride2", 2, 2, 5, 3, 4, 3, 3, convT([2]int{2, 2}, [2]int{}, [4]int{}, PadSame, 1, [2]int{})},
	{"same_stride3_small_kernel", 1, 2, 3, 4, 2, 2, 2, convT([2]int{3, 3}, [2]int{}, [4]int{}, PadSame, 1, [2]int{})},
	{"pointwise_stride2", 1, 4, 3, 3, 2, 1, 1, convT([2]int{2, 2}, [2]int{}, [4]int{}, PadValid, 1, [2]int{1, 1})},
	{"dcgan_k4_s2_p1", 3, 3, 4, 4, 2, 4, 4, convT([2]int{2, 2}, [2]int{}, [4]int{1, 1, 1, 1}, PadExplicit, 1, [2]int{})},
	{"odd_row", 1, 2, 1, 7, 3, 1, 3, convT([2]int{1, 2}, [2]int{}, [4]int{0, 0, 1, 1}, PadExplicit, 1, [2]int{})},
}

// naiveConv2DTranspose scatters every input pixel through the kernel, the
// direct definition of a transposed convolution; b may be nil.
func naiveConv2DTranspose(t *testing.T, x, w, b *tensor.Tensor, a Conv2DTransposeAttrs) *tensor.Tensor {
	n, c, h, wd := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	og, kh, kw := w.Dim(1), w.Dim(2), w.Dim(3)
	s, d, p, g := testPad(t, Conv2DAttrs{Stride: a.Stride, Dilation: a.Dilation, Pad: a.Pad, Groups: a.Groups}, 0, 0, kh, kw)
	oh := (h-1)*s[0] - p[0] - p[1] + (kh-1)*d[0] + 1 + a.OutputPadding[0]
	ow := (wd-1)*s[1] - p[2] - p[3] + (kw-1)*d[1] + 1 + a.OutputPadding[1]
	if a.Padding == PadSame {
		oh, ow = h*s[0], wd*s[1]
		_, _, p, _ = testPad(t, a.Conv2DAttrs, oh, ow, kh, kw)
	}
	o := og * g
	y := tensor.Zeros(tensor.Float64, n, o, oh, ow)
	for ni := 0; ni < n; ni++ {
		for oc := 0; oc < o; oc++ {
			for k := 0; k < oh*ow; k++ {
				if b != nil {
					y.Float64s()[(ni*o+oc)*oh*ow+k] = b.At(oc)
				}
			}
		}
		for ci := 0; ci < c; ci++ {
			for yi := 0; yi < h; yi++ {
				for xi := 0; xi < wd; xi++ {
					for co := 0; co < og; co++ {
						for i := 0; i < kh; i++ {
							for j := 0; j < kw; j++ {
								ih, iw := yi*s[0]-p[0]+i*d[0], xi*s[1]-p[2]+j*d[1]
								if ih < 0 || ih >= oh || iw < 0 || iw >= ow {
									continue
								}
								oc := ci/(c/g)*og + co
								y.Float64s()[((ni*o+oc)*oh+ih)*ow+iw] += x.At(((ni*c+ci)*h+yi)*wd+xi) * w.At(((ci*og+co)*kh+i)*kw+j)
							}
						}
					}
				}
			}
		}
	}
	return y
}

func dot(a, b *tensor.Tensor) float64 {
	s := 0.0
	for i := range a.Size() {
		s += a.At(i) * b.At(i)
	}
	return s
}

func TestConv2DTransposeMatchesNaive(t *testing.T) {
	for i, c := range convTCases {
		t.Run(c.name, func(t *testing.T) {
			g := max(c.a.Groups, 1)
			x := randn(uint64(400+i), c.n, c.c, c.h, c.w)
			w := randn(uint64(500+i), c.c, c.o/g, c.kh, c.kw)
			b := randn(uint64(600+i), c.o)
			got, err := Conv2DTranspose(x, w, b, c.a)
			require.NoError(t, err)
			requireClose(t, naiveConv2DTranspose(t, x, w, b, c.a), got, 1e-12, 1e-12)
			checkDTypes(t, func() Op { return Conv2DTransposeOp(c.a) }, x, w, b)

			// The adjoint identity <conv(z, w), x> == <z, convT(x, w)>, for
			// z of convT's output shape.
			y, err := Conv2DTranspose(x, w, nil, c.a)
			require.NoError(t, err)
			z := randn(uint64(700+i), y.Shape()...)
			cz, err := Conv2D(z, w, nil, c.a.Conv2DAttrs)
			require.NoError(t, err)
			require.Equal(t, x.Shape(), cz.Shape())
			require.InDelta(t, dot(cz, x), dot(z, y), 1e-9)
		})
	}
}

func TestConv2DTransposeOutputSize(t *testing.T) {
	cases := []struct {
		name string
		h    int
		a    Conv2DTransposeAttrs
		k    int
		want int
	}{
		{"pytorch_outpad", 5, convT([2]int{2, 2}, [2]int{}, [4]int{1, 1, 1, 1}, PadExplicit, 1, [2]int{1, 1}), 3, 10},
		{"pytorch_no_outpad", 5, convT([2]int{2, 2}, [2]int{}, [4]int{1, 1, 1, 1}, PadExplicit, 1, [2]int{}), 3, 9},
		{"tf_same", 5, convT([2]int{2, 2}, [2]int{}, [4]int{}, PadSame, 1, [2]int{}), 3, 10},
		{"tf_valid", 5, convT([2]int{2, 2}, [2]int{}, [4]int{}, PadValid, 1, [2]int{}), 3, 11},
		{"dcgan", 4, convT([2]int{2, 2}, [2]int{}, [4]int{1, 1, 1, 1}, PadExplicit, 1, [2]int{}), 4, 8},
		{"dilated", 3, convT([2]int{}, [2]int{3, 3}, [4]int{}, PadExplicit, 1, [2]int{}), 2, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			y, err := Conv2DTranspose(tensor.Zeros(tensor.Float32, 1, 1, c.h, c.h), tensor.Zeros(tensor.Float32, 1, 1, c.k, c.k), nil, c.a)
			require.NoError(t, err)
			require.Equal(t, tensor.Shape{1, 1, c.want, c.want}, y.Shape())
		})
	}
}

func TestConv2DTransposeErrors(t *testing.T) {
	z := func(shape ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, shape...) }
	cases := []struct {
		name string
		in   []*tensor.Tensor
		a    Conv2DTransposeAttrs
		want string
	}{
		{"rank", ins(z(1, 2, 3), z(2, 1, 3, 3)), Conv2DTransposeAttrs{}, "conv2d_transpose: inputs float32[1 2 3], float32[2 1 3 3]: want x [N, C, H, W] and w [C, O/groups, KH, KW]"},
		{"channels", ins(z(1, 2, 3, 3), z(3, 1, 3, 3)), Conv2DTransposeAttrs{}, "conv2d_transpose: inputs float32[1 2 3 3], float32[3 1 3 3]: with groups 1 want w [C=2, O/groups, KH, KW]"},
		{"groups", ins(z(1, 3, 3, 3), z(3, 1, 3, 3)), convT([2]int{}, [2]int{}, [4]int{}, PadExplicit, 2, [2]int{}), "C divisible by groups"},
		{"outpad_stride", ins(z(1, 1, 3, 3), z(1, 1, 3, 3)), convT([2]int{2, 2}, [2]int{}, [4]int{}, PadExplicit, 1, [2]int{2, 0}), "output padding [2 0] must be non-negative and below the stride [2 2]"},
		{"same_outpad", ins(z(1, 1, 3, 3), z(1, 1, 3, 3)), convT([2]int{2, 2}, [2]int{}, [4]int{}, PadSame, 1, [2]int{1, 1}), "SAME padding takes no output padding"},
		{"empty_output", ins(z(1, 1, 2, 2), z(1, 1, 3, 3)), convT([2]int{}, [2]int{}, [4]int{2, 2, 0, 0}, PadExplicit, 1, [2]int{}), "padding [2 2 0 0] leaves an empty output 0x4"},
		{"bias", ins(z(1, 2, 3, 3), z(2, 3, 3, 3), z(2)), Conv2DTransposeAttrs{}, "want bias [3]"},
		{"negative_groups", ins(z(1, 2, 3, 3), z(2, 3, 3, 3)), convT([2]int{}, [2]int{}, [4]int{}, PadExplicit, -1, [2]int{}), "must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Conv2DTransposeOp(c.a).Forward(c.in)
			require.ErrorContains(t, err, c.want)
		})
	}
}
