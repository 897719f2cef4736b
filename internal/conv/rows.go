package conv

import (
	"runtime"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/scratch"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// The ungrouped kernels lower images channels last, one row per output
// pixel (im2col.Im2Row), the layout of cuDNN's and oneDNN's GEMM
// convolutions and of Caffe2's NHWC im2col. With K = KH·KW·C taps, p
// pixels per image and W read as O×K with taps ordered (i, j, c), a chunk
// of images computes
//
//	rowsData:         yᵀ (imgs·p × O) = rows(x) (imgs·p × K) · Wᵀ
//	rowsFilter:       dWᵀ (K × O)    += rows(x)ᵀ (K × imgs·p) · dyᵀ (imgs·p × O)
//	rowsDataAdjoint:  stride 1 (adjointAsConv): dx = conv(dy, W turned 180°,
//	                  channels swapped); else rows(dx) (imgs·p × K) = dyᵀ · W,
//	                  added back by Row2Im
//
// so each is one tall GEMM per chunk whose narrow side (O, or C for the data
// gradient) fills the micro-kernel's NR columns, instead of a GEMM O rows
// tall per image, and the filter gradient sums a whole chunk in its K. The
// weights enter as op(B) = Wᵀ, which GEMM packs into panels once per call.
//
// The batch is split over the cores once (par.ForBatch), and each core takes
// its images through every stage, chunk by chunk (pad, GEMM, layout
// change), with serial GEMMs (coreGemm) and chunks sized to its own L2
// (chunkElems); the filter gradient is summed per core and the sums added
// in core order. Cutting each GEMM over the cores instead would wake and
// wait for the other cores at every product and every layout pass, and
// move the data between the cores' caches at each stage; the per-layer
// products are too small to repay that. Taps run (i, j, c) so that a row
// is KH contiguous runs of the padded channels-last image. At stride 1 the row matrix is
// not built at all (gridPays: the implicit GEMM below), and when the output
// is the input's size one grid of dy serves both gradients (sharedGrid).
// The layout changes between NCHW and channels last are im2col.Transpose's
// 8×8 register transposes.

// rowsAlg is the channels-last algorithm: each pass runs by Winograd
// where winogradPays, by the implicit GEMM where gridPays, and by the row
// matrix otherwise, and adds the bias in its output pass.
type rowsAlg[T tensor.Float] struct{}

func (rowsAlg[T]) Forward(g Geom, x, w, b, y []T)  { rowsData(g, x, w, b, y) }
func (rowsAlg[T]) DataGrad(g Geom, y, w, b, x []T) { rowsDataAdjoint(g, y, w, b, x) }
func (rowsAlg[T]) FilterGrad(g Geom, x, y, dw []T) { rowsFilter(g, x, y, dw) }

// rowsPay reports whether the channels-last kernels take g: ungrouped, with
// KW·C and KW·O (the runs their lowering copies, forward and backward) of
// at least 16 values. Below that (MNIST's one-channel first layer) the
// copies are too short to repay, and im2col's runs of whole output rows
// win.
func (g Geom) rowsPay() bool { return g.Groups == 1 && g.KW*min(g.C, g.Cout) >= 16 }

// gridPays reports whether the implicit GEMM takes g: stride 1, runs of
// KW·C ≥ 32 so each of its GEMMs has a useful K, and at most 20% of its
// grid cells (gridLayout) wasted beyond the OH×OW outputs: 6% and 13% on
// 3×3 SAME layers of 32×32 and 16×16, against 27% at 8×8 (ResNet's
// third stage, left to the row matrix) and 125% on MNIST's 12×12 5×5
// VALID one.
func gridPays(g im2col.Geom) bool {
	if g.SH != 1 || g.SW != 1 || g.KW*g.C < 32 {
		return false
	}
	l := gridLayout(g)
	return 10*l.PaddedH()*l.PaddedW() <= 12*g.OH*g.OW
}

// chunkElems bounds the elements of a chunk's scratch (row matrix or grid,
// and the GEMM's output), 256 KiB of float32, so that it stays in the
// core's L2 between the lowering that writes it, the GEMM and the layout
// change that read it.
const chunkElems = 1 << 16

// minChunkRows is the fewest GEMM rows (output pixels, or grid cells) a
// chunk gets, even past chunkElems: each chunk's GEMMs pack the weights
// (op(B)) again, so a chunk of one small image (ResNet's 8×8 stage: 64
// rows against 576×64 weights) repacked them for every image.
const minChunkRows = 256

// chunkImages is how many images go into one chunk when each takes per
// elements of scratch and rows GEMM rows: as many as chunkElems holds, but
// enough for minChunkRows.
func chunkImages(n, per, rows int) int {
	return max(1, min(n, max(chunkElems/max(per, 1), (minChunkRows+rows-1)/max(rows, 1))))
}

// gemmFunc is the signature of gemm.Gemm and gemm.Serial.
type gemmFunc[T tensor.Float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// coreGemm returns the GEMM a kernel calls inside par.ForBatch over n images:
// gemm.Serial when every core has images of its own, gemm.Gemm when there
// are fewer images than cores (batch-1 inference), so that those products
// still use every core. The functions are the concrete instantiations,
// which are static: a generic one made here would allocate its closure.
func coreGemm[T tensor.Float](n int) gemmFunc[T] {
	return concrete[T, gemmFunc[T]](splitsImages(n),
		gemmFunc[float32](gemm.Gemm[float32]), gemmFunc[float32](gemm.Serial[float32]),
		gemmFunc[float64](gemm.Gemm[float64]), gemmFunc[float64](gemm.Serial[float64]))
}

// packedFunc is the signature of gemm.GemmPacked and gemm.SerialPacked.
type packedFunc[T tensor.Float] func(transA bool, m int, alpha T, a []T, lda int, pb *gemm.PackedB[T], beta T, c []T, ldc int)

// corePacked is coreGemm for products with a packed B.
func corePacked[T tensor.Float](n int) packedFunc[T] {
	return concrete[T, packedFunc[T]](splitsImages(n),
		packedFunc[float32](gemm.GemmPacked[float32]), packedFunc[float32](gemm.SerialPacked[float32]),
		packedFunc[float64](gemm.GemmPacked[float64]), packedFunc[float64](gemm.SerialPacked[float64]))
}

// concrete returns, as F, the function for T among the float32 and
// float64 ones given, the serial one when serial.
func concrete[T tensor.Float, F any](serial bool, par32, serial32, par64, serial64 any) F {
	f := par64
	switch _, is32 := any(*new(T)).(float32); {
	case is32 && serial:
		f = serial32
	case is32:
		f = par32
	case serial:
		f = serial64
	}
	return f.(F)
}

// splitsImages reports whether par.ForBatch over n images gives every core
// images of its own, so that the products inside it run serially
// (coreGemm).
func splitsImages(n int) bool { return par.BatchWorkers(n) >= runtime.GOMAXPROCS(0) }

// coreSums gives each of par.ForBatch's workers over n images a zeroed pooled
// buffer of size elements for its partial sums (of a filter or bias
// gradient); addFilter and addTo add them up in worker order, so the sum
// does not depend on timing, and return them to the pool.
type coreSums[T tensor.Float] []*[]T

func newCoreSums[T tensor.Float](n, size int) coreSums[T] {
	s := make(coreSums[T], par.BatchWorkers(n))
	for i := range s {
		s[i] = scratch.Get[T](size)
		clear(*s[i])
	}
	return s
}

// addFilter adds partial filter gradients wt [(i·KW+j)·C+c, o] into dw.
func (s coreSums[T]) addFilter(g Geom, dw []T) {
	for _, wt := range s {
		addFilter(g, *wt, dw)
		scratch.Put(wt)
	}
}

// addTo adds the partial sums into dst.
func (s coreSums[T]) addTo(dst []T) {
	for _, part := range s {
		vec.Add(dst, *part)
		scratch.Put(part)
	}
}

// rowWeights writes w [O, C, KH, KW] with its taps ordered (i, j, c), wr
// [o, (i·KW+j)·C+c] = w[o, c, i, j]; flipped, it writes the weights of the
// data gradient as a convolution of dy instead, C outputs from O inputs
// with the kernel turned by 180°: wr [c, (i·KW+j)·O+o] = w[o, c, KH−1−i,
// KW−1−j].
func rowWeights[T tensor.Float](g Geom, w, wr []T, flipped bool) {
	kk := g.KH * g.KW
	for o := 0; o < g.Cout; o++ {
		for c := 0; c < g.C; c++ {
			src := w[(o*g.C+c)*kk : (o*g.C+c+1)*kk]
			for t, v := range src {
				if flipped {
					wr[(c*kk+kk-1-t)*g.Cout+o] = v
				} else {
					wr[(o*kk+t)*g.C+c] = v
				}
			}
		}
	}
}

// rowsConvolve writes y = conv(x, w) + b for n images x [C, H, W] (geometry
// g) into y [nout, OH, OW], w [nout, K] from rowWeights; b may be nil.
// pk, when not nil, holds w's GEMM packings (Prepare), which the products
// take instead of packing w again.
func rowsConvolve[T tensor.Float](g im2col.Geom, n, nout int, x, w, b, y []T, pk *rowsPacked[T]) {
	if gridPays(g) {
		gridConvolve(g, n, nout, x, w, b, y, pk)
		return
	}
	k, p := g.Rows(), g.Cols()
	par.ForBatchOf(n, rowsConvolveJob[T]{g: g, nout: nout, k: k, p: p, nb: chunkImages(n, p*(k+nout), p),
		x: x, w: w, b: b, y: y, pk: pk, mul: coreGemm[T](n), mulPacked: corePacked[T](n)})
}

// rowsConvolveJob is rowsConvolve's loop over runs of images.
type rowsConvolveJob[T tensor.Float] struct {
	g              im2col.Geom
	nout, k, p, nb int
	x, w, b, y     []T
	pk             *rowsPacked[T]
	mul            gemmFunc[T]
	mulPacked      packedFunc[T]
}

func (j *rowsConvolveJob[T]) Range(_, lo, hi int) {
	g, nout, k, p, nb, x, y := j.g, j.nout, j.k, j.p, j.nb, j.x, j.y
	chw := g.C * g.H * g.W
	bufs := getRowsScratch[T](g, nb, nout)
	defer bufs.put()
	rows, out, xp := bufs.rows(), bufs.out(), bufs.padded()
	for i0 := lo; i0 < hi; i0 += nb {
		m := min(nb, hi-i0)
		for i := range m {
			im2col.Pad(g, x[(i0+i)*chw:], xp)
			im2col.Im2Row(g, xp, rows[i*p*k:(i+1)*p*k])
		}
		if j.pk != nil {
			j.mulPacked(false, m*p, 1, rows, k, j.pk.whole, 0, out, nout)
		} else {
			j.mul(false, true, m*p, nout, k, 1, rows, k, j.w, k, 0, out, nout)
		}
		for i := range m {
			yi := y[(i0+i)*nout*p : (i0+i+1)*nout*p]
			im2col.Transpose(yi, p, out[i*p*nout:], nout, p, nout, false)
			if j.b != nil {
				addBias(yi, j.b, 1, nout, p)
			}
		}
	}
}

// rowsScratch is the pooled scratch of a chunk of nb images in the row
// kernels: their rows [nb·p, K], the product [nb·p, nout] and one padded
// image.
type rowsScratch[T tensor.Float] [3]*[]T

func getRowsScratch[T tensor.Float](g im2col.Geom, nb, nout int) rowsScratch[T] {
	p := g.Cols()
	return rowsScratch[T]{scratch.Get[T](nb * p * g.Rows()), scratch.Get[T](nb * p * nout), scratch.Get[T](g.PaddedLen())}
}

func (s rowsScratch[T]) rows() []T   { return *s[0] }
func (s rowsScratch[T]) out() []T    { return *s[1] }
func (s rowsScratch[T]) padded() []T { return *s[2] }

func (s rowsScratch[T]) put() {
	for _, b := range s {
		scratch.Put(b)
	}
}

// rowsData writes y = conv(x, w) + b for an ungrouped convolution.
func rowsData[T tensor.Float](g Geom, x, w, b, y []T) {
	if winogradPays[T](g.Geom, g.Cout) {
		winogradConvolve(g.Geom, g.N, g.Cout, any(x).([]float32), any(w).([]float32), false, any(b).([]float32), any(y).([]float32))
		return
	}
	wb := scratch.Get[T](len(w))
	defer scratch.Put(wb)
	rowWeights(g, w, *wb, false)
	rowsConvolve(g.Geom, g.N, g.Cout, x, *wb, b, y, nil)
}

// adjointAsConv reports whether rowsDataAdjoint runs the data gradient as
// a convolution of dy: at stride 1, when the input has at most 30% more
// pixels than the output. That convolution multiplies H·W·K·O times where
// the forward pass does OH·OW·K·O, the rest against dy's zero border
// (2.25 times the work on MNIST's 12×12 5×5 VALID layer).
func (g Geom) adjointAsConv() bool {
	return g.SH == 1 && g.SW == 1 && 10*g.H*g.W <= 13*g.OH*g.OW
}

// adjoint is the geometry of the data gradient of a stride-1 convolution
// as a convolution of dy (see rowsDataAdjoint).
func (g Geom) adjoint() im2col.Geom {
	return im2col.Geom{C: g.Cout, H: g.OH, W: g.OW, KH: g.KH, KW: g.KW, SH: 1, SW: 1, DH: g.DH, DW: g.DW,
		PT: (g.KH-1)*g.DH - g.PT, PL: (g.KW-1)*g.DW - g.PL, OH: g.H, OW: g.W}
}

// rowsDataAdjoint writes dx = convᵀ(dy, w) + b for an ungrouped
// convolution. At stride 1 that is itself a convolution (taken when
// adjointAsConv): dx[c, h, w] =
// Σ dy[o, h+PT−i·DH, w+PL−j·DW]·w[o, c, i, j], the kernel turned by 180°
// over a window that starts (KH−1)·DH−PT rows above dy (a negative start
// crops). Otherwise dy is multiplied out to rows and added back by Row2Im.
func rowsDataAdjoint[T tensor.Float](g Geom, dy, w, b, dx []T) {
	if g.adjointAsConv() && winogradPays[T](g.adjoint(), g.C) {
		winogradConvolve(g.adjoint(), g.N, g.C, any(dy).([]float32), any(w).([]float32), true, any(b).([]float32), any(dx).([]float32))
		return
	}
	wb := scratch.Get[T](len(w))
	defer scratch.Put(wb)
	wr := *wb
	if g.adjointAsConv() {
		rowWeights(g, w, wr, true)
		rowsConvolve(g.adjoint(), g.N, g.C, dy, wr, b, dx, nil)
		return
	}
	rowWeights(g, w, wr, false)
	k, p, chw := g.Rows(), g.Cols(), g.C*g.H*g.W
	nb, mul := chunkImages(g.N, p*(k+g.Cout), p), coreGemm[T](g.N)
	par.ForBatch(g.N, func(_, lo, hi int) {
		bufs := getRowsScratch[T](g.Geom, nb, g.Cout)
		defer bufs.put()
		rows, dyT, xp := bufs.rows(), bufs.out(), bufs.padded()
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			for i := range m {
				im2col.Transpose(dyT[i*p*g.Cout:], g.Cout, dy[(i0+i)*g.Cout*p:], p, g.Cout, p, false)
			}
			mul(false, false, m*p, k, g.Cout, 1, dyT, g.Cout, wr, k, 0, rows, k)
			for i := range m {
				clear(xp)
				im2col.Row2Im(g.Geom, rows[i*p*k:(i+1)*p*k], xp)
				dxi := dx[(i0+i)*chw : (i0+i+1)*chw]
				im2col.Unpad(g.Geom, xp, dxi, false) // write: one value per covered cell, the rest zeroed
				if b != nil {
					addBias(dxi, b, 1, g.C, g.H*g.W)
				}
			}
		}
	})
}

// rowsFilter adds the filter gradient of an ungrouped convolution with
// input x and output gradient dy into dw, summing every image of a chunk in
// one GEMM.
func rowsFilter[T tensor.Float](g Geom, x, dy, dw []T) {
	if winogradPays[T](g.Geom, g.Cout) {
		winogradFilter(g.Geom, g.N, g.Cout, any(x).([]float32), any(dy).([]float32), any(dw).([]float32))
		return
	}
	if gridPays(g.Geom) {
		gridFilter(g, x, dy, dw)
		return
	}
	rowsBackward(g, x, nil, dy, nil, dw, nil)
}

// sharedRows reports whether rowsBackward takes both gradients of g: the
// filter gradient and the data gradient both go through row matrices
// (not the implicit GEMM, and not the data gradient as a convolution).
func (g Geom) sharedRows() bool {
	return g.rowsPay() && !gridPays(g.Geom) && !g.adjointAsConv()
}

// rowsBackward writes the data gradient of a convolution that sharedRows
// takes into dx (zeroed unless AdjointWritesAll), adds its filter
// gradient into dw and, when db is non-nil, its bias gradient into db
// (biasSums). Per chunk, x is lowered to rows and dy laid out channels
// last once for both GEMMs: the filter gradient reads the rows, then the
// data gradient's GEMM overwrites them with dyᵀ·W, which Row2Im adds back
// into dx. With dx nil (and w unused) it
// takes the filter gradient alone, as rowsFilter.
func rowsBackward[T tensor.Float](g Geom, x, w, dy, dx, dw, db []T) {
	var wr []T
	if dx != nil {
		wb := scratch.Get[T](len(w))
		defer scratch.Put(wb)
		wr = *wb
		rowWeights(g, w, wr, false)
	}
	k, p, chw := g.Rows(), g.Cols(), g.C*g.H*g.W
	nb, mul := chunkImages(g.N, p*(k+g.Cout), p), coreGemm[T](g.N)
	sums := newCoreSums[T](g.N, k*g.Cout)
	var bsums coreSums[T]
	if db != nil {
		bsums = newCoreSums[T](g.N, g.Cout)
	}
	par.ForBatch(g.N, func(worker, lo, hi int) {
		bufs := getRowsScratch[T](g.Geom, nb, g.Cout)
		defer bufs.put()
		rows, dyT, xp, wt := bufs.rows(), bufs.out(), bufs.padded(), *sums[worker]
		for i0 := lo; i0 < hi; i0 += nb {
			m := min(nb, hi-i0)
			for i := range m {
				im2col.Pad(g.Geom, x[(i0+i)*chw:], xp)
				im2col.Im2Row(g.Geom, xp, rows[i*p*k:(i+1)*p*k])
				dyi := dy[(i0+i)*g.Cout*p:][:g.Cout*p]
				im2col.Transpose(dyT[i*p*g.Cout:], g.Cout, dyi, p, g.Cout, p, false)
				if db != nil {
					biasSums(dyi, *bsums[worker], p)
				}
			}
			mul(true, false, k, g.Cout, m*p, 1, rows, k, dyT, g.Cout, 1, wt, g.Cout)
			if dx == nil {
				continue
			}
			mul(false, false, m*p, k, g.Cout, 1, dyT, g.Cout, wr, k, 0, rows, k)
			for i := range m {
				clear(xp)
				im2col.Row2Im(g.Geom, rows[i*p*k:(i+1)*p*k], xp)
				im2col.Unpad(g.Geom, xp, dx[(i0+i)*chw:(i0+i+1)*chw], false) // write: one value per covered cell, the rest zeroed
			}
		}
	})
	sums.addFilter(g, dw)
	bsums.addTo(db)
}

// addFilter adds wt [(i·KW+j)·C+c, o] into dw [o, c, i, j].
func addFilter[T tensor.Float](g Geom, wt, dw []T) {
	kk := g.KH * g.KW
	for o := 0; o < g.Cout; o++ {
		for c := 0; c < g.C; c++ {
			dst := dw[(o*g.C+c)*kk : (o*g.C+c+1)*kk]
			for t := range dst {
				dst[t] += wt[(t*g.C+c)*g.Cout+o]
			}
		}
	}
}
