package conv

import (
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/scratch"
	"github.com/plumbml/plumb/tensor"
)

// At stride 1 the rows need not be built at all (implicit GEMM, as in
// cuDNN's IMPLICIT_GEMM algorithm and Chetlur et al., "cuDNN: Efficient
// Primitives for Deep Learning", 2014): pad a chunk of images into
// consecutive channels-last windows, a grid of cells C values each, and
// compute one output per grid cell, the window's top-left corner. The
// inputs of tap (i, j) for every cell then form a matrix whose row q
// starts at cell q + i·DH·PaddedW + j·DW: the grid itself, offset, with
// row stride C. With DW = 1 the taps of one kernel row are contiguous, so
// the product is KH GEMMs with K = KW·C, each reading the grid in place
// (its rows overlap, which a strided read does not mind). The cells past
// a window's OH×OW corner compute values that are dropped (forward) or
// meet zero gradients (filter), some (PaddedH·PaddedW)/(OH·OW) − 1 extra
// work; 13% on a 32×32 image with a 3×3 kernel.
//
// The grid's rows run on into each other, so a window may share its
// padding (gridLayout): where g pads no more below than above and no more
// right than left, each row keeps only its left padding, which the taps
// past the previous row's right edge read as that row's right padding,
// and each image only its top padding, the previous image's bottom one.
// A 3×3 SAME layer then wastes 6% of its cells at 32×32, 13% at 16×16
// and 27% at 8×8, where separate windows waste 13%, 27% and 56%.

// gridLayout returns the geometry whose windows (Pad, PaddedH, PaddedW)
// lay out g's grid, stride 1: the compact one above, PaddedH = H + PT
// and PaddedW = W + PL, where g's bottom and right padding are at most its
// top and left ones (and its outputs fit the narrower window); else g.
// Only OH and OW differ from g's, and only the window's size reads them.
func gridLayout(g im2col.Geom) im2col.Geom {
	pb, pr := g.PaddedH()-g.H-g.PT, g.PaddedW()-g.W-g.PL
	c := g
	c.OH, c.OW = g.OH-pb, g.OW-pr
	if g.PT < 0 || g.PL < 0 || pb > g.PT || pr > g.PL || c.OH < 1 || c.OW < 1 ||
		g.OH > c.PaddedH() || g.OW > c.PaddedW() {
		return g
	}
	return c
}

// gridTaps calls fn(off, col, k) for each GEMM of an implicit product on a
// grid laid out by g (a gridLayout): its input matrix starts off elements
// into the grid, its taps are the k columns of w from col on.
func gridTaps(g im2col.Geom, fn func(off, col, k int)) {
	pw := g.PaddedW()
	if g.DW == 1 {
		for i := 0; i < g.KH; i++ {
			fn(i*g.DH*pw*g.C, i*g.KW*g.C, g.KW*g.C)
		}
		return
	}
	for i := 0; i < g.KH; i++ {
		for j := 0; j < g.KW; j++ {
			fn((i*g.DH*pw+j*g.DW)*g.C, (i*g.KW+j)*g.C, g.C)
		}
	}
}

// gridChunk returns how many images a chunk of the implicit kernels holds
// when each output cell carries nout values, and the grid buffer's length
// for it: the windows of layout g plus the tail the last cells' taps read
// past them.
func gridChunk(g im2col.Geom, n, nout int) (nb, gridLen int) {
	cells := g.PaddedH() * g.PaddedW()
	nb = chunkImages(n, cells*(g.C+nout), cells)
	tail := ((g.KH-1)*g.DH*g.PaddedW() + (g.KW-1)*g.DW) * g.C
	return nb, nb*cells*g.C + tail
}

// padChunk writes images [i0, i0+m) of x into grid as consecutive padded
// windows of layout g, zeroes the rest of grid (the tail) and returns the
// cell count.
func padChunk[T tensor.Float](g im2col.Geom, x []T, i0, m int, grid []T) int {
	win, chw := g.PaddedLen(), g.C*g.H*g.W
	for i := range m {
		im2col.Pad(g, x[(i0+i)*chw:], grid[i*win:(i+1)*win])
	}
	clear(grid[m*win:])
	return m * g.PaddedH() * g.PaddedW()
}

// gridConvolve is rowsConvolve at stride 1, as an implicit GEMM; pk,
// when not nil, holds the packings of w's taps (Prepare, in gridTaps'
// order).
func gridConvolve[T tensor.Float](g im2col.Geom, n, nout int, x, w, b, y []T, pk *rowsPacked[T]) {
	l := gridLayout(g)
	nb, gridLen := gridChunk(l, n, nout)
	par.ForBatchOf(n, gridConvolveJob[T]{g: g, l: l, nout: nout, nb: nb, gridLen: gridLen,
		x: x, w: w, b: b, y: y, pk: pk, mul: coreGemm[T](n), mulPacked: corePacked[T](n)})
}

// gridConvolveJob is gridConvolve's loop over runs of images.
type gridConvolveJob[T tensor.Float] struct {
	g, l              im2col.Geom
	nout, nb, gridLen int
	x, w, b, y        []T
	pk                *rowsPacked[T]
	mul               gemmFunc[T]
	mulPacked         packedFunc[T]
}

func (j *gridConvolveJob[T]) Range(_, lo, hi int) {
	g, l, nout, nb, x, w, b, y, pk := j.g, j.l, j.nout, j.nb, j.x, j.w, j.b, j.y, j.pk
	k, p, ph, pw := g.Rows(), g.Cols(), l.PaddedH(), l.PaddedW()
	gb, ob := scratch.Get[T](j.gridLen), scratch.Get[T](nb*ph*pw*nout)
	defer scratch.Put(gb)
	defer scratch.Put(ob)
	grid, out := *gb, *ob
	for i0 := lo; i0 < hi; i0 += nb {
		m := min(nb, hi-i0)
		cells := padChunk(l, x, i0, m, grid)
		beta, tap := T(0), 0
		gridTaps(l, func(off, col, kt int) {
			if pk != nil {
				j.mulPacked(false, cells, 1, grid[off:], g.C, pk.taps[tap], beta, out, nout)
			} else {
				j.mul(false, true, cells, nout, kt, 1, grid[off:], g.C, w[col:], k, beta, out, nout)
			}
			beta, tap = 1, tap+1
		})
		for i := range m {
			yi := y[(i0+i)*nout*p : (i0+i+1)*nout*p]
			for oh := 0; oh < g.OH; oh++ {
				im2col.Transpose(yi[oh*g.OW:], p, out[(i*ph+oh)*pw*nout:], nout, g.OW, nout, false)
			}
			if b != nil {
				addBias(yi, b, 1, nout, p)
			}
		}
	}
}

// spreadDy writes dy [cout, OH, OW] channels last into e [rows, pw, cout]
// at cells (oh, ow), zero elsewhere.
func spreadDy[T tensor.Float](g Geom, pw int, dy, e []T) {
	p := g.Cols()
	clear(e)
	for oh := 0; oh < g.OH; oh++ {
		im2col.Transpose(e[oh*pw*g.Cout:], g.Cout, dy[oh*g.OW:], p, g.Cout, g.OW, false)
	}
}

// gridFilter is rowsFilter at stride 1, as an implicit GEMM: dy is
// spread over the grid's cells, zero on the dropped ones.
func gridFilter[T tensor.Float](g Geom, x, dy, dw []T) {
	l := gridLayout(g.Geom)
	k, p, pw := g.Rows(), g.Cols(), l.PaddedW()
	cells := l.PaddedH() * pw
	nb, gridLen := gridChunk(l, g.N, g.Cout)
	mul := coreGemm[T](g.N)
	sums := newCoreSums[T](g.N, k*g.Cout)
	par.ForBatch(g.N, func(worker, lo, hi int) {
		gb, eb := scratch.Get[T](gridLen), scratch.Get[T](nb*cells*g.Cout)
		defer scratch.Put(gb)
		defer scratch.Put(eb)
		grid, dyg, wt := *gb, *eb, *sums[worker]
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			q := padChunk(l, x, i0, m, grid)
			for i := range m {
				spreadDy(g, pw, dy[(i0+i)*g.Cout*p:], dyg[i*cells*g.Cout:(i+1)*cells*g.Cout])
			}
			gridTaps(l, func(off, col, kt int) {
				mul(true, false, kt, g.Cout, q, 1, grid[off:], g.C, dyg, g.Cout, 1, wt[col*g.Cout:], g.Cout)
			})
		}
	})
	sums.addFilter(g, dw)
}

// sharedGrid reports whether gridBackward takes both gradients of g: the
// implicit GEMM pays for the filter gradient and for the data gradient as
// a convolution, and the output is the input's size (stride 1, padding
// (KH−1)·DH rows and (KW−1)·DW columns in all, as SAME gives), so the two
// grids have one width and dy sits in both at a fixed distance.
func (g Geom) sharedGrid() bool {
	return g.rowsPay() && g.OH == g.H && g.OW == g.W && gridPays(g.Geom) && gridPays(g.adjoint())
}

// gridBackward writes the data gradient of a convolution that sharedGrid
// takes into dx (written whole, so it need not be zeroed), adds its
// filter gradient into dw and, when db is non-nil, its bias gradient into
// db, spreading dy over a grid once for both GEMMs and summing each image
// of dy for db (biasSums). The filter gradient's grid holds dy[o, oh, ow]
// at cell (oh, ow) of x's padded window, zero elsewhere; the data
// gradient's grid (the window of adjoint) holds it at cell (oh+PT', ow+PL')
// of a window as wide and as tall, PT' = (KH−1)·DH − PT and PL' alike. So
// both read one buffer: the data gradient's grid from its start, the
// filter gradient's from PT'·PaddedW + PL' cells in, where the wrapped
// cells of the data gradient's grid land on the zero cells of the other.
func gridBackward[T tensor.Float](g Geom, x, w, dy, dx, dw, db []T) {
	l, back := g.Geom, g.adjoint()
	if lc, bc := gridLayout(l), gridLayout(back); lc.PaddedH() == bc.PaddedH() && lc.PaddedW() == bc.PaddedW() {
		l, back = lc, bc // both compact, still one size
	}
	k, p, ph, pw := g.Rows(), g.Cols(), l.PaddedH(), l.PaddedW()
	shift := back.PT*pw + back.PL
	reach := (g.KH-1)*g.DH*pw + (g.KW-1)*g.DW // cells the last taps read past the grid
	cells := ph * pw
	nb, mul := chunkImages(g.N, cells*(2*g.C+g.Cout), cells), coreGemm[T](g.N)
	fb := scratch.Get[T](k * g.Cout)
	defer scratch.Put(fb)
	wflip := *fb
	rowWeights(g, w, wflip, true)
	sums := newCoreSums[T](g.N, k*g.Cout)
	var bsums coreSums[T] // per-worker bias sums
	if db != nil {
		bsums = newCoreSums[T](g.N, g.Cout)
	}
	par.ForBatch(g.N, func(worker, lo, hi int) {
		gb, eb, ob := scratch.Get[T](nb*cells*g.C+reach*g.C), scratch.Get[T]((nb*cells+reach)*g.Cout), scratch.Get[T](nb*cells*g.C)
		defer scratch.Put(gb)
		defer scratch.Put(eb)
		defer scratch.Put(ob)
		grid, dyg, out, wt := *gb, *eb, *ob, *sums[worker]
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			q := padChunk(l, x, i0, m, grid)
			clear(dyg[:shift*g.Cout])
			for i := range m {
				dyi := dy[(i0+i)*g.Cout*p:][:g.Cout*p]
				spreadDy(g, pw, dyi, dyg[(shift+i*cells)*g.Cout:(shift+(i+1)*cells)*g.Cout])
				if db != nil {
					biasSums(dyi, *bsums[worker], p)
				}
			}
			clear(dyg[(shift+q)*g.Cout : (q+reach)*g.Cout])
			gridTaps(l, func(off, col, kt int) {
				mul(true, false, kt, g.Cout, q, 1, grid[off:], g.C, dyg[shift*g.Cout:], g.Cout, 1, wt[col*g.Cout:], g.Cout)
			})
			beta := T(0)
			gridTaps(back, func(off, col, kt int) {
				mul(false, true, q, g.C, kt, 1, dyg[off:], g.Cout, wflip[col:], back.Rows(), beta, out, g.C)
				beta = 1
			})
			for i := range m {
				dxi := dx[(i0+i)*g.C*g.H*g.W : (i0+i+1)*g.C*g.H*g.W]
				for r := 0; r < g.H; r++ {
					im2col.Transpose(dxi[r*g.W:], g.H*g.W, out[(i*cells+r*pw)*g.C:], g.C, g.W, g.C, false)
				}
			}
		}
	})
	sums.addFilter(g, dw)
	bsums.addTo(db)
}
