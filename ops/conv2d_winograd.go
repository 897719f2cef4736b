package ops

import (
	"runtime"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/winograd"
	"github.com/plumbml/plumb/tensor"
)

// 3×3 stride-1 convolutions with enough channels run by Winograd's minimal
// filtering F(2×2, 3×3) (Lavin and Gray 2016; internal/winograd), as
// cuDNN's and oneDNN's Winograd algorithms do: each 2×2 block of outputs
// comes from a 4×4 tile of the padded channels-last image, whose 16
// transformed values per channel meet the transformed weights in 16 GEMMs
// of tiles × C by C × O, 2.25 times fewer multiplications than the direct
// product. The forward pass and the data gradient (a stride-1 convolution
// of dy, rowsDataAdjoint) take it; the filter gradient stays on the
// implicit GEMM.

// winogradPays reports whether rowsConvolve runs g, with nout outputs, by
// Winograd: float32 (the vector transforms are float32, and float64 is
// the numeric-gradient check's type, kept on the direct product), an
// undilated 3×3 kernel at stride 1, and input and output channels that are
// multiples of 8 (winograd.Fast) and at least 16, so that the products'
// K = C and N = nout fill the micro-kernel.
func winogradPays[T tensor.Float](g im2col.Geom, nout int) bool {
	_, f32 := any(T(0)).(float32)
	return f32 && g.KH == 3 && g.KW == 3 && g.SH == 1 && g.SW == 1 && g.DH == 1 && g.DW == 1 &&
		min(g.C, nout) >= 16 && winograd.Fast(g.C, nout)
}

// winogradTiles is the most tiles a block of winogradConvolve takes:
// its 16 planes of transformed inputs and of products, (C + nout)·16
// values a tile, fill about chunkElems, so that they stay in the core's
// L2 from the input transform through the GEMMs to the output transform.
func winogradTiles(c, nout int) int {
	return max(32, chunkElems/(16*(c+nout)))
}

// winogradFilters writes the transformed weights u [16][C][nout], u[ξ][c][o]
// = (G·w[o, c]·Gᵀ)[ξ], of w [nout, 9·C] in rowWeights' layout (taps (i, j)
// then channels), and returns each plane packed for the GEMMs.
func winogradFilters(c, nout int, w, u []float32) []*gemm.PackedB[float32] {
	for o := range nout {
		for ch := range c {
			var k [9]float64
			for t := range k {
				k[t] = float64(w[(o*9+t)*c+ch])
			}
			for xi, v := range winograd.Filter(k) {
				u[(xi*c+ch)*nout+o] = float32(v)
			}
		}
	}
	packed := make([]*gemm.PackedB[float32], 16)
	for xi := range packed {
		packed[xi] = gemm.PackB(false, c, nout, u[xi*c*nout:(xi+1)*c*nout], nout)
	}
	return packed
}

// winogradConvolve is rowsConvolve (y = conv(x, w) + b for n images x [C,
// H, W], w [nout, 9·C] from rowWeights, b nil or [nout]) by F(2×2, 3×3).
// The batch is split over the cores as in rowsConvolve; each core pads a
// chunk of images channels last, with a zero row and column more where OH
// or OW is odd so that every tile is whole, then takes the chunk's tiles a
// block at a time through the input transform, the 16 GEMMs against the
// packed planes of transformed weights and the output transform (which
// adds the bias), and lays the outputs out NCHW.
func winogradConvolve(g im2col.Geom, n, nout int, x, w, b, y []float32) {
	th, tw := (g.OH+1)/2, (g.OW+1)/2
	tg := g
	tg.OH, tg.OW = 2*th, 2*tw
	pw, win, tiles := tg.PaddedW(), tg.PaddedLen(), th*tw
	p, chw := g.OH*g.OW, g.C*g.H*g.W

	ub := getScratch[float32](16 * g.C * nout)
	defer putScratch(ub)
	packed := winogradFilters(g.C, nout, w, *ub)
	bias := b
	if bias == nil {
		zb := getScratch[float32](nout)
		defer putScratch(zb)
		bias = *zb
		clear(bias)
	}
	mul := gemm.SerialPacked[float32]
	if par.BatchWorkers(n) < runtime.GOMAXPROCS(0) {
		mul = gemm.GemmPacked[float32]
	}
	tb := winogradTiles(g.C, nout)
	nb := max(1, min(n, tb/tiles)) // images per chunk: small images share a block
	tb = min(tb, nb*tiles)
	// The planes' strides are odd multiples of 64 bytes (tileStride), so
	// that the transforms' 16 streams fall in different L1 sets: at 8 KiB
	// apart (128 tiles of 16 channels) they shared one.
	vs, ms := tileStride(tb*g.C), tileStride(tb*nout)
	par.ForBatch(n, func(_, lo, hi int) {
		xb, vb, mb, ob := getScratch[float32](nb*win), getScratch[float32](16*vs),
			getScratch[float32](16*ms), getScratch[float32](nb*4*tiles*nout)
		defer putScratch(xb)
		defer putScratch(vb)
		defer putScratch(mb)
		defer putScratch(ob)
		xp, v, m, out := *xb, *vb, *mb, *ob
		for i0 := lo; i0 < hi; i0 += nb {
			imgs := min(nb, hi-i0)
			for i := range imgs {
				im2col.Pad(tg, x[(i0+i)*chw:], xp[i*win:(i+1)*win])
			}
			for q0 := 0; q0 < imgs*tiles; q0 += tb {
				nt := min(tb, imgs*tiles-q0)
				tileRuns(q0, nt, tiles, tw, func(q, run, img, ty, tx int) {
					winograd.Input(run, xp[img*win+(2*ty*pw+2*tx)*g.C:], pw*g.C, g.C, v[(q-q0)*g.C:], vs)
				})
				for xi, pb := range packed {
					mul(false, nt, 1, v[xi*vs:], g.C, pb, 0, m[xi*ms:], nout)
				}
				tileRuns(q0, nt, tiles, tw, func(q, run, img, ty, tx int) {
					winograd.Output(run, m[(q-q0)*nout:], ms, nout, bias,
						out[((img*2*th+2*ty)*2*tw+2*tx)*nout:], 2*tw*nout)
				})
			}
			for i := range imgs {
				yi, oi := y[(i0+i)*nout*p:(i0+i+1)*nout*p], out[i*4*tiles*nout:]
				for oh := 0; oh < g.OH; oh++ {
					im2col.Transpose(yi[oh*g.OW:], p, oi[oh*2*tw*nout:], nout, g.OW, nout, false)
				}
			}
		}
	})
}

// tileRuns calls fn for the tiles [q0, q0+nt) of a chunk whose images have
// tiles tiles each, tw to a row, in runs along one tile row: fn(q, run,
// img, ty, tx) for the run of run tiles starting at tile q, tile (ty, tx)
// of image img.
func tileRuns(q0, nt, tiles, tw int, fn func(q, run, img, ty, tx int)) {
	for q := q0; q < q0+nt; {
		img, r := q/tiles, q%tiles
		ty, tx := r/tw, r%tw
		run := min(tw-tx, q0+nt-q)
		fn(q, run, img, ty, tx)
		q += run
	}
}
