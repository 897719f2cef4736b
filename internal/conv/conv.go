// Package conv holds the 2-D convolution algorithms on plain slices, in
// float32 and float64: y = conv(x, w) for x [N, C, H, W] and w [Cout,
// C/Groups, KH, KW], its data gradient (the adjoint in x, which is also
// conv2d_transpose's forward pass) and its filter gradient. ops validates
// the inputs and computes the geometry; this package only runs it.
//
// Each algorithm has a file of its own and the same three passes
// (Algorithm); Choose picks one from the geometry alone, never from
// timing, so a model gives the same numbers on every run:
//
//   - rows.go: ungrouped convolutions with enough channels, lowered
//     channels last into one tall GEMM per chunk of images. Each pass takes
//     the fastest lowering the geometry admits: Winograd's F(2×2, 3×3)
//     (winograd.go, float32 3×3 stride 1), the implicit GEMM on a padded
//     grid (grid.go, stride 1), or the row matrix (im2col.Im2Row).
//   - depthwise.go: depthwise convolutions (Groups = C), as direct
//     per-plane loops.
//   - im2col.go: the rest (grouped ones, and ungrouped ones with too few
//     channels), one im2col GEMM per image and group.
//
// The kernels take their scratch buffers from internal/scratch and spread
// the batch over the cores with internal/par.
package conv

import (
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/scratch"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// Geom is a validated convolution y = conv(x, w) over a batch: x is [N, C,
// H, W], w is [Cout, C/Groups, KH, KW] and y is [N, Cout, OH, OW].
// conv2d computes it forwards; conv2d_transpose runs it backwards, so its
// own input plays y and its output plays x.
type Geom struct {
	im2col.Geom
	N, Cout, Groups int
}

// Algorithm is one way to compute a convolution's three passes on
// slices. Each writes or adds into a caller's buffer and cannot fail: the
// geometry was validated before.
type Algorithm[T tensor.Float] interface {
	// Forward writes y = conv(x, w) + b into y, zeroed unless
	// g.DataWritesAll; b [Cout] may be nil.
	Forward(g Geom, x, w, b, y []T)
	// DataGrad writes x = convᵀ(y, w) + b, the adjoint of Forward in x
	// plus a bias b [C] that may be nil, into x, zeroed unless
	// g.AdjointWritesAll.
	DataGrad(g Geom, y, w, b, x []T)
	// FilterGrad adds the gradient of <y, conv(x, w)> in w into dw.
	FilterGrad(g Geom, x, y, dw []T)
}

// The algorithms, each in float32 and float64.
var (
	_ Algorithm[float32] = im2colAlg[float32]{}
	_ Algorithm[float64] = im2colAlg[float64]{}
	_ Algorithm[float32] = rowsAlg[float32]{}
	_ Algorithm[float64] = rowsAlg[float64]{}
	_ Algorithm[float32] = depthwiseAlg[float32]{}
	_ Algorithm[float64] = depthwiseAlg[float64]{}
)

// Choose returns the algorithm that runs g: the channels-last one when
// rowsPay, the depthwise one for a depthwise convolution, im2col for the
// rest.
func Choose[T tensor.Float](g Geom) Algorithm[T] {
	switch {
	case g.rowsPay():
		return rowsAlg[T]{}
	case g.depthwise():
		return depthwiseAlg[T]{}
	}
	return im2colAlg[T]{}
}

// DataWritesAll reports whether Forward writes every element of its
// output rather than adding into a zeroed one: the channels-last kernels
// write it (rowsConvolve's layout change) and so do the im2col ones (each
// image's and group's product has beta 0); the depthwise ones add tap by
// tap.
func (g Geom) DataWritesAll() bool { return !g.depthwise() }

// AdjointWritesAll reports whether the data gradient (DataGrad,
// rowsBackward, gridBackward) writes every element of x: the
// channels-last kernels do when they run it as a convolution of dy, or
// when the padded window covers all of x so that Unpad's writes reach
// every cell (a VALID convolution whose windows stop short of the last
// rows leaves those rows to the zeroing).
func (g Geom) AdjointWritesAll() bool {
	covers := g.PT >= 0 && g.PL >= 0 && g.PaddedH() >= g.H+g.PT && g.PaddedW() >= g.W+g.PL
	return g.rowsPay() && (g.adjointAsConv() || covers)
}

// Forward computes y = conv(x, w) + b, or convᵀ(x, w) + b when
// transposed, into y, zeroed unless DataWritesAll (AdjointWritesAll when
// transposed) says the kernel writes all of it; b may be nil.
func Forward[T tensor.Float](g Geom, transposed bool, x, w, b, y []T) {
	switch {
	case transposed:
		Choose[T](g).DataGrad(g, x, w, b, y)
	case g.pointwise():
		pointwiseForward(g, x, w, b, y)
	default:
		Choose[T](g).Forward(g, x, w, b, y)
	}
}

// Backward adds into dw and db and writes dx (each nil when unwanted),
// all zeroed but dx where AdjointWritesAll (DataWritesAll when
// transposed). For y = conv(x, w) + b: dx = convᵀ(dy, w), dw = the filter
// gradient of x and dy, db = Σ_{images, pixels} dy. For y = convᵀ(x, w) +
// b the roles swap: dx = conv(dy, w) and dw is the filter gradient with dy
// as the convolution's input and x as its output gradient. When the
// channels-last kernels can take both gradients of a conv2d in one pass
// over dy (sharedRows, sharedGrid, unless either runs by Winograd), they
// do.
func Backward[T tensor.Float](g Geom, transposed bool, x, w, dy, dx, dw, db []T) {
	c, p := g.Cout, g.Cols()
	if transposed {
		c, p = g.C, g.H*g.W
	}
	// The shared kernels take both gradients, unless either runs by
	// Winograd.
	shared := g.sharedRows() || g.sharedGrid() && !winogradPays[T](g.adjoint(), g.C) && !winogradPays[T](g.Geom, g.Cout)
	if !transposed && dx != nil && dw != nil && shared {
		if g.sharedGrid() {
			gridBackward(g, x, w, dy, dx, dw, db)
		} else {
			rowsBackward(g, x, w, dy, dx, dw, db)
		}
		dx, dw, db = nil, nil, nil
	}
	alg := Choose[T](g)
	if dx != nil {
		if transposed {
			alg.Forward(g, dy, w, nil, dx)
		} else {
			alg.DataGrad(g, dy, w, nil, dx)
		}
	}
	if dw != nil {
		if transposed {
			alg.FilterGrad(g, dy, x, dw)
		} else {
			alg.FilterGrad(g, x, dy, dw)
		}
	}
	if db != nil {
		biasGrad(dy, db, g.N, c, p)
	}
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
	part := make([]*[]T, par.BatchWorkers(n))
	par.ForBatch(n, func(worker, lo, hi int) {
		part[worker] = scratch.Get[T](c)
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
		scratch.Put(acc)
	}
}

// biasSums adds the sum of each p-long row of dy into acc, each summed in
// float64 (vec.SumF64, AVX for float32) and rounded once.
func biasSums[T tensor.Float](dy, acc []T, p int) {
	for j := range acc {
		acc[j] += T(vec.SumF64(dy[j*p : (j+1)*p]))
	}
}
