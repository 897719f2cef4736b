package conv

import (
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/scratch"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// depthwise reports whether g is a depthwise convolution: groups > 1, each
// of one input channel (TF's depthwise_conv2d with channel multiplier
// cout/C, when the weights are [C·mult, 1, KH, KW]).
func (g Geom) depthwise() bool { return g.Groups > 1 && g.Groups == g.C }

// The depthwise kernels convolve each plane directly. Per group the GEMM
// of the im2col kernels is mult×p×KH·KW with mult (the channel
// multiplier) usually 1: a matrix-vector product of nine taps, all
// overhead. Here each tap (i, j) of each plane is one axpy (a dot product
// for the filter gradient) between the window of outputs whose input lies
// inside the image and the input it reads (dwTap), so the lowering and
// the padding cost nothing; at column stride 1 each runs as one call of
// vec's AVX row loops. Images are spread over the cores.

// depthwiseAlg is the depthwise algorithm; its passes add the bias after
// the taps.
type depthwiseAlg[T tensor.Float] struct{}

func (depthwiseAlg[T]) Forward(g Geom, x, w, b, y []T) {
	depthwiseData(g, x, w, y)
	if b != nil {
		addBias(y, b, g.N, g.Cout, g.Cols())
	}
}

func (depthwiseAlg[T]) DataGrad(g Geom, y, w, b, x []T) {
	depthwiseDataAdjoint(g, y, w, x)
	if b != nil {
		addBias(x, b, g.N, g.C, g.H*g.W)
	}
}

func (depthwiseAlg[T]) FilterGrad(g Geom, x, y, dw []T) { depthwiseFilter(g, x, y, dw) }

// dwTap is the window of outputs whose tap (i, j) input lies inside the
// image: rows [r0, r1) and columns [c0, c1), output (oh, ow) reading
// input (oh·SH + ro, ow·SW + co).
type dwTap struct{ r0, r1, c0, c1, ro, co int }

// dwTaps returns each tap's window, taps in (i, j) order.
func dwTaps(g Geom) []dwTap {
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
func dwWindows[T tensor.Float](g Geom, taps []dwTap, lo, hi int, x, y []T, fn func(o, t int, yw, xw []T, rows, cols int)) {
	mult, plane, p := g.Cout/g.C, g.H*g.W, g.Cols()
	for n := lo; n < hi; n++ {
		for o := 0; o < g.Cout; o++ {
			xc, yo := x[(n*g.C+o/mult)*plane:][:plane], y[(n*g.Cout+o)*p:][:p]
			for t, tp := range taps {
				if rows, cols := tp.r1-tp.r0, tp.c1-tp.c0; rows > 0 && cols > 0 {
					fn(o, t, yo[tp.r0*g.OW+tp.c0:], xc[(tp.r0*g.SH+tp.ro)*g.W+tp.c0*g.SW+tp.co:], rows, cols)
				}
			}
		}
	}
}

// depthwiseData writes y = conv(x, w) into the zeroed y. Each (image,
// output channel) plane is convolved on its own, and the planes, not the
// images, are spread over the cores: a batch-1 MobileNet layer is one
// image of up to 960 planes. Each tap is one AxpyRows over its window;
// at a column stride s above 1 the input plane is first split into its s
// column phases (columns ph, ph + s, ph + 2s, ... side by side), so that
// every tap reads a contiguous run of one phase, where the strided loop
// (as the gradients' depthwiseDataAdjointStrided does) would step
// through the input one scalar at a time.
func depthwiseData[T tensor.Float](g Geom, x, w, y []T) {
	taps, kk, s := dwTaps(g), g.KH*g.KW, g.SW
	mult, plane, p := g.Cout/g.C, g.H*g.W, g.Cols()
	// Phase ph of a plane holds pw[ph] columns at off[ph]; tap t reads
	// phase ph[t] from column base[t] on (input column c·s + co is column
	// c + base of phase co mod s).
	pw, off := make([]int, s), make([]int, s)
	for ph := 0; ph < s; ph++ {
		pw[ph] = max(0, (g.W-ph+s-1)/s)
		if ph > 0 {
			off[ph] = off[ph-1] + g.H*pw[ph-1]
		}
	}
	tph, tbase := make([]int, len(taps)), make([]int, len(taps))
	for t, tp := range taps {
		tph[t] = ((tp.co % s) + s) % s
		tbase[t] = (tp.co - tph[t]) / s
	}
	par.ForBatch(g.N*g.Cout, func(_, lo, hi int) {
		var buf *[]T
		if s > 1 {
			buf = scratch.Get[T](plane)
			defer scratch.Put(buf)
		}
		for q := lo; q < hi; q++ {
			n, o := q/g.Cout, q%g.Cout
			xc, yo := x[(n*g.C+o/mult)*plane:][:plane], y[q*p:][:p]
			if s > 1 {
				dwPhases(*buf, xc, g.H, g.W, s, pw, off)
			}
			for t, tp := range taps {
				rows, cols := tp.r1-tp.r0, tp.c1-tp.c0
				if rows <= 0 || cols <= 0 {
					continue
				}
				yw := yo[tp.r0*g.OW+tp.c0:]
				ir := tp.r0*g.SH + tp.ro // first input row
				if s == 1 {
					vec.AxpyRows(yw, g.OW, xc[ir*g.W+tp.c0+tp.co:], g.SH*g.W, rows, cols, w[o*kk+t])
					continue
				}
				ph := tph[t]
				vec.AxpyRows(yw, g.OW, (*buf)[off[ph]+ir*pw[ph]+tp.c0+tbase[t]:], g.SH*pw[ph], rows, cols, w[o*kk+t])
			}
		}
	})
}

// dwPhases copies plane x (h×w) into buf as its s column phases: phase ph,
// at off[ph], is h rows of pw[ph] columns, x's columns ph, ph + s, ....
func dwPhases[T tensor.Float](buf, x []T, h, w, s int, pw, off []int) {
	for r := 0; r < h; r++ {
		xr := x[r*w:][:w]
		for ph := 0; ph < s; ph++ {
			d := buf[off[ph]+r*pw[ph]:][:pw[ph]]
			for c := range d {
				d[c] = xr[c*s+ph]
			}
		}
	}
}

// depthwiseDataAdjoint adds convᵀ(y, w) into x.
func depthwiseDataAdjoint[T tensor.Float](g Geom, y, w, x []T) {
	if g.SW != 1 {
		depthwiseDataAdjointStrided(g, y, w, x)
		return
	}
	taps, kk := dwTaps(g), g.KH*g.KW
	par.ForBatch(g.N, func(_, lo, hi int) {
		dwWindows(g, taps, lo, hi, x, y, func(o, t int, yw, xw []T, rows, cols int) {
			vec.AxpyRows(xw, g.SH*g.W, yw, g.OW, rows, cols, w[o*kk+t]) // x rows, W or more apart, do not overlap
		})
	})
}

// depthwiseFilter adds the filter gradient of <y, conv(x, w)> into dw,
// each run of images summing into a pooled buffer of its own, added in
// run order.
func depthwiseFilter[T tensor.Float](g Geom, x, y, dw []T) {
	if g.SW != 1 {
		depthwiseFilterStrided(g, x, y, dw)
		return
	}
	taps, kk := dwTaps(g), g.KH*g.KW
	sums := newCoreSums[T](g.N, len(dw))
	par.ForBatch(g.N, func(worker, lo, hi int) {
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
func dwCols(g Geom) []dwCol {
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
func dwRows(g Geom, fn func(oh, i, ih int)) {
	for oh := 0; oh < g.OH; oh++ {
		for i := 0; i < g.KH; i++ {
			if ih := oh*g.SH - g.PT + i*g.DH; ih >= 0 && ih < g.H {
				fn(oh, i, ih)
			}
		}
	}
}

// depthwiseDataAdjointStrided is depthwiseDataAdjoint at a column stride
// above 1.
func depthwiseDataAdjointStrided[T tensor.Float](g Geom, y, w, x []T) {
	cols, mult, kk, plane, p := dwCols(g), g.Cout/g.C, g.KH*g.KW, g.H*g.W, g.Cols()
	par.ForBatch(g.N, func(_, lo, hi int) {
		for n := lo; n < hi; n++ {
			for o := 0; o < g.Cout; o++ {
				xc := x[(n*g.C+o/mult)*plane:][:plane]
				yo, wo := y[(n*g.Cout+o)*p:][:p], w[o*kk:][:kk]
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
func depthwiseFilterStrided[T tensor.Float](g Geom, x, y, dw []T) {
	cols, mult, kk, plane, p := dwCols(g), g.Cout/g.C, g.KH*g.KW, g.H*g.W, g.Cols()
	sums := newCoreSums[T](g.N, len(dw))
	par.ForBatch(g.N, func(worker, lo, hi int) {
		acc := *sums[worker]
		for n := lo; n < hi; n++ {
			for o := 0; o < g.Cout; o++ {
				xc := x[(n*g.C+o/mult)*plane:][:plane]
				yo, ao := y[(n*g.Cout+o)*p:][:p], acc[o*kk:][:kk]
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
