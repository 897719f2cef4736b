// Package im2col lowers the sliding windows of a 2-D convolution to the
// columns of a matrix and back (Caffe's im2col and col2im), so that a
// convolution, both of its gradients and a transposed convolution each
// become one GEMM per image and group.
package im2col

import "github.com/plumbml/plumb/tensor"

// Geom is the geometry of one 2-D convolution over a single CHW image.
// Callers validate it: every size is non-negative, strides and dilations
// are at least 1, and OH, OW are the sizes the padding yields.
type Geom struct {
	C, H, W int // input channels, height and width
	KH, KW  int // kernel height and width
	SH, SW  int // strides
	DH, DW  int // dilations
	PT, PL  int // zero padding above and left of the input (bottom and right only shape OH, OW)
	OH, OW  int // output height and width
}

// Rows is the row count of the column matrix, C·KH·KW.
func (g Geom) Rows() int { return g.C * g.KH * g.KW }

// Cols is the column count of the column matrix, OH·OW.
func (g Geom) Cols() int { return g.OH * g.OW }

// Im2Col writes x [C, H, W] as col [C·KH·KW, OH·OW] with
//
//	col[(c·KH+i)·KW+j, oh·OW+ow] = x[c, oh·SH−PT+i·DH, ow·SW−PL+j·DW],
//
// or 0 where that position lies in the padding.
func Im2Col[T tensor.Float](g Geom, x, col []T) {
	sweep(g, x, col, true,
		func(c, x []T) { copy(c, x) },
		func(c, x []T, s int) {
			x = x[:(len(c)-1)*s+1]
			for k, i := 0, 0; k < len(c) && i < len(x); k, i = k+1, i+s {
				c[k] = x[i]
			}
		})
}

// Col2Im adds col [C·KH·KW, OH·OW] into x [C, H, W]: the adjoint of Im2Col,
// which adds every column entry to the input cell it was read from and
// drops the entries that came from the padding.
func Col2Im[T tensor.Float](g Geom, col, x []T) {
	sweep(g, x, col, false,
		func(c, x []T) {
			for k, v := range c {
				x[k] += v
			}
		},
		func(c, x []T, s int) {
			x = x[:(len(c)-1)*s+1]
			for k, i := 0, 0; k < len(c) && i < len(x); k, i = k+1, i+s {
				x[i] += c[k]
			}
		})
}

// sweep pairs every run of column-matrix entries with the input cells they
// stand for: per channel, kernel tap and output row, the output columns
// whose input column lies inside the image. It hands each run to unit when
// SW is 1 (the input cells are contiguous) or to strided (they are SW
// apart), column slice first. With clearPad, the entries that fall in the
// padding are set to 0.
func sweep[T tensor.Float](g Geom, x, col []T, clearPad bool, unit func(c, x []T), strided func(c, x []T, s int)) {
	plane, n := g.H*g.W, g.Cols()
	for c := 0; c < g.C; c++ {
		xc := x[c*plane : (c+1)*plane]
		for i := 0; i < g.KH; i++ {
			for j := 0; j < g.KW; j++ {
				row := col[((c*g.KH+i)*g.KW+j)*n:][:n]
				off := j*g.DW - g.PL
				lo, hi := span(g.W, g.SW, off, g.OW)
				for oh := 0; oh < g.OH; oh++ {
					out := row[oh*g.OW : (oh+1)*g.OW]
					ih := oh*g.SH - g.PT + i*g.DH
					if ih < 0 || ih >= g.H || lo == hi {
						if clearPad {
							clear(out)
						}
						continue
					}
					if clearPad {
						clear(out[:lo])
						clear(out[hi:])
					}
					in := xc[ih*g.W+lo*g.SW+off:]
					if g.SW == 1 {
						unit(out[lo:hi], in[:hi-lo])
					} else {
						strided(out[lo:hi], in, g.SW)
					}
				}
			}
		}
	}
}

// span returns the run [lo, hi) of outputs o in [0, out) whose input
// position o·s+off lies in [0, n).
func span(n, s, off, out int) (lo, hi int) {
	if off < 0 {
		lo = (-off + s - 1) / s
	}
	if n-off > 0 {
		hi = (n-off-1)/s + 1
	}
	hi = min(hi, out)
	return min(lo, hi), hi
}
