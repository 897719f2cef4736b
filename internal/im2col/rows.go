package im2col

import (
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// The channels-last lowering. Im2Col's matrix has one row per kernel tap
// and one column per output pixel, so a convolution is W (O×C·KH·KW) times
// it: a GEMM only O rows tall, and ResNet's 16-64 channels are thin next to
// a 6-row micro-kernel, which then reads its B operand a whole image row
// apart per k. Its transpose, one row per output pixel (the "im2row" or
// NHWC lowering of cuDNN's and oneDNN's GEMM convolutions), turns the
// convolution into rows (pixels × taps) times Wᵀ (taps × O): pixels of many
// images stack into one tall GEMM whose narrow side O fills the
// micro-kernel's 16-column panels, and the filter gradient into one GEMM
// whose K is every pixel of the batch.
//
// To make those rows cheap to build, the image is first copied channels
// last (HWC) into a zero-bordered window (Pad), so that each row is KH runs
// of KW·C contiguous values (KH·KW runs of C when dilated), taps ordered
// (i, j, c), and no copy ever tests a bound.

// PaddedH is the height of the window Pad writes: the input rows the
// kernel reaches, (OH−1)·SH + (KH−1)·DH + 1, from row −PT on.
func (g Geom) PaddedH() int { return (g.OH-1)*g.SH + (g.KH-1)*g.DH + 1 }

// PaddedW is the width of the window Pad writes, as PaddedH.
func (g Geom) PaddedW() int { return (g.OW-1)*g.SW + (g.KW-1)*g.DW + 1 }

// PaddedLen is the element count of the window, PaddedH·PaddedW·C.
func (g Geom) PaddedLen() int { return g.PaddedH() * g.PaddedW() * g.C }

// Pad writes x [C, H, W] channels last into xp [PaddedH, PaddedW, C]:
//
//	xp[r, s, c] = x[c, r−PT, s−PL], or 0 outside x.
//
// PT and PL may be negative (the window then starts inside x), which the
// data gradient of a stride-1 convolution needs when a pad exceeds the
// kernel's reach.
func Pad[T tensor.Float](g Geom, x, xp []T) {
	ph, pw := g.PaddedH(), g.PaddedW()
	xp = xp[:ph*pw*g.C]
	r0, r1, s0, s1 := g.inside()
	if r0 >= r1 || s0 >= s1 {
		clear(xp)
		return
	}
	clear(xp[:(r0*pw+s0)*g.C])
	for r := r0; r < r1; r++ {
		Transpose(xp[(r*pw+s0)*g.C:], g.C, x[(r-g.PT)*g.W+s0-g.PL:], g.H*g.W, g.C, s1-s0, false)
		end := ((r+1)*pw + s0) * g.C // the border up to the next row's first cell
		if r == r1-1 {
			end = len(xp)
		}
		clear(xp[(r*pw+s1)*g.C : end])
	}
}

// Unpad adds the window xp [PaddedH, PaddedW, C] back into x [C, H, W]:
// the adjoint of Pad, which drops the border cells. With add false it
// writes them instead, for an x whose other cells are already right (a
// zeroed gradient): every cell of x inside the window gets exactly one
// value, and a write need not read the cold destination first.
func Unpad[T tensor.Float](g Geom, xp, x []T, add bool) {
	pw := g.PaddedW()
	r0, r1, s0, s1 := g.inside()
	if s0 >= s1 {
		return
	}
	for r := r0; r < r1; r++ {
		Transpose(x[(r-g.PT)*g.W+s0-g.PL:], g.H*g.W, xp[(r*pw+s0)*g.C:], g.C, s1-s0, g.C, add)
	}
}

// inside returns the rows [r0, r1) and columns [s0, s1) of the padded
// window that hold cells of x.
func (g Geom) inside() (r0, r1, s0, s1 int) {
	return max(0, g.PT), min(g.PaddedH(), g.H+g.PT), max(0, g.PL), min(g.PaddedW(), g.W+g.PL)
}

// Transpose writes the transpose of the r×c matrix at src (row stride lds)
// into the c×r matrix at dst (row stride ldd), dst[j·ldd+i] = src[i·lds+j],
// or adds it when add is set. Whole 8×8 float32 blocks go through AVX
// register transposes (vec.TransposeBlocks); the rest takes four rows of src
// at a time, so each row of dst gets four contiguous values per pass and
// src is read in four sequential streams.
func Transpose[T tensor.Float](dst []T, ldd int, src []T, lds int, r, c int, add bool) {
	if r == 0 || c == 0 {
		return
	}
	rows, cols := vec.TransposeBlocks(dst, ldd, src, lds, r, c, add)
	if cols < c { // the columns right of the blocks, in the blocks' rows
		transposeGo(dst[cols*ldd:], ldd, src[cols:], lds, rows, c-cols, add)
	}
	if rows < r { // the rows below the blocks
		transposeGo(dst[rows:], ldd, src[rows*lds:], lds, r-rows, c, add)
	}
}

// transposeGo is Transpose in Go.
func transposeGo[T tensor.Float](dst []T, ldd int, src []T, lds int, r, c int, add bool) {
	if r == 0 || c == 0 {
		return
	}
	i := 0
	for ; i+4 <= r; i += 4 {
		s0, s1, s2, s3 := src[i*lds:][:c], src[(i+1)*lds:][:c], src[(i+2)*lds:][:c], src[(i+3)*lds:][:c]
		if add {
			for j := range s0 {
				d := dst[j*ldd+i:][:4]
				d[0] += s0[j]
				d[1] += s1[j]
				d[2] += s2[j]
				d[3] += s3[j]
			}
			continue
		}
		for j := range s0 {
			d := dst[j*ldd+i:][:4]
			d[0], d[1], d[2], d[3] = s0[j], s1[j], s2[j], s3[j]
		}
	}
	for ; i < r; i++ {
		s := src[i*lds:][:c]
		if add {
			for j, v := range s {
				dst[j*ldd+i] += v
			}
			continue
		}
		for j, v := range s {
			dst[j*ldd+i] = v
		}
	}
}

// Im2Row writes the window xp [PaddedH, PaddedW, C] (see Pad) as rows
// [OH·OW, KH·KW·C]:
//
//	rows[oh·OW+ow, (i·KW+j)·C+c] = xp[oh·SH+i·DH, ow·SW+j·DW, c],
//
// which is x[c, oh·SH−PT+i·DH, ow·SW−PL+j·DW] or 0 in the padding. Each
// output row and tap row is one vec.CopyRows of runs of KW·C values (C
// when dilated), one run per output column.
func Im2Row[T tensor.Float](g Geom, xp, rows []T) {
	g.runs(func(src, dst, n int) {
		vec.CopyRows(rows[dst:], g.Rows(), xp[src:], g.SW*g.C, g.OW, n)
	})
}

// Row2Im adds rows [OH·OW, KH·KW·C] into the window xp [PaddedH, PaddedW,
// C]: the adjoint of Im2Row, each entry added to the cell it was read from
// (vec.AddRows, whose windows overlap when SW < KW).
func Row2Im[T tensor.Float](g Geom, rows, xp []T) {
	g.runs(func(src, dst, n int) {
		vec.AddRows(xp[src:], g.SW*g.C, rows[dst:], g.Rows(), g.OW, n)
	})
}

// runs calls fn(src, dst, n) for each output row oh, tap row i and run of
// n contiguous taps (KW·C when DW = 1, else C): the run starts at src in
// the window for output column 0 (SW·C further per column) and at dst in
// the rows (a row further per column).
func (g Geom) runs(fn func(src, dst, n int)) {
	pw, k := g.PaddedW(), g.Rows()
	run := g.C
	if g.DW == 1 {
		run = g.KW * g.C
	}
	for oh := 0; oh < g.OH; oh++ {
		for i := 0; i < g.KH; i++ {
			for j := 0; j < g.KW*g.C; j += run {
				fn(((oh*g.SH+i*g.DH)*pw+j/g.C*g.DW)*g.C, oh*g.OW*k+i*g.KW*g.C+j, run)
			}
		}
	}
}
