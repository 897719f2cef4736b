package conv

import (
	"runtime"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/tensor"
)

// pointwiseFilter reports whether g's filter is a pointwise one: ungrouped
// 1×1 at stride 1 (MobileNet's and EfficientNet's expansions and
// projections, ResNet's bottleneck ends).
func (g Geom) pointwiseFilter() bool {
	return g.Groups == 1 && g.KH == 1 && g.KW == 1 && g.SH == 1 && g.SW == 1
}

// pointwise reports whether g is a pointwise convolution without padding:
// then each image's output, [Cout, H·W] in NCHW, is the product of the
// filter [Cout, C] and the image [C, H·W] as they lie.
func (g Geom) pointwise() bool {
	return g.pointwiseFilter() && g.PT == 0 && g.PL == 0 && g.OH == g.H && g.OW == g.W
}

// pointwiseForward writes y = conv(x, w) + b for a pointwise g as one GEMM
// per image, y[n] = w·x[n], then the bias: no lowering and no layout
// change, where the channels-last kernels would move every input and
// output through NHWC (as ONNX Runtime's and MLAS's NCHW 1×1 convolution
// is a plain SGEMM). With fewer images than cores, each product spreads
// over the cores itself; otherwise each core takes whole images.
func pointwiseForward[T tensor.Float](g Geom, x, w, b, y []T) {
	c, o, p := g.C, g.Cout, g.H*g.W
	image := func(n int, product func(bool, bool, int, int, int, T, []T, int, []T, int, T, []T, int)) {
		yn := y[n*o*p:][:o*p]
		product(false, false, o, p, c, 1, w, c, x[n*c*p:], p, 0, yn, p)
		if b != nil {
			addBias(yn, b, 1, o, p)
		}
	}
	if g.N < runtime.GOMAXPROCS(0) {
		for n := 0; n < g.N; n++ {
			image(n, gemm.Gemm[T])
		}
		return
	}
	par.ForBatch(g.N, func(_, lo, hi int) {
		for n := lo; n < hi; n++ {
			image(n, gemm.Serial[T])
		}
	})
}
