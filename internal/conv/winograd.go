package conv

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/scratch"
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
// of dy, rowsDataAdjoint) and the filter gradient (its adjoint, rowsFilter)
// take it.

// winogradPays reports whether the convolution g, with nout outputs, runs by
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

// winogradWeights writes the transformed weights of w [O, C, 3, 3] into u
// and returns each of their 16 planes packed for the GEMMs. For the
// forward convolution (C inputs, O outputs) u is [16][C][O], u[ξ][c][o] =
// (G·w[o, c]·Gᵀ)[ξ]; flipped, for the data gradient as a convolution of dy
// (O inputs, C outputs, the kernel turned by 180°, as rowWeights flips
// it), u is [16][O][C]. The cores share the output channels (VGG's
// 512×512 layers have 262,144 kernels), in runs of 16 for the forward
// layout (forRuns).
func winogradWeights(cout, c int, w []float32, flipped bool, u []float32) []*gemm.PackedB[float32] {
	kernel := func(o, ch int) [9]float64 {
		var k [9]float64
		for t, v := range w[(o*c+ch)*9 : (o*c+ch+1)*9] {
			if flipped {
				t = 8 - t
			}
			k[t] = float64(v)
		}
		return k
	}
	in, out := c, cout
	if flipped {
		in, out = cout, c
		par.ForBatch(cout, func(_, lo, hi int) {
			for o := lo; o < hi; o++ {
				for ch := range c {
					for xi, v := range winograd.Filter(kernel(o, ch)) {
						u[(xi*in+o)*out+ch] = float32(v)
					}
				}
			}
		})
	} else {
		forRuns(cout, func(o0, o1 int) {
			for ch := range c {
				for o := o0; o < o1; o++ {
					for xi, v := range winograd.Filter(kernel(o, ch)) {
						u[(xi*in+ch)*out+o] = float32(v)
					}
				}
			}
		})
	}
	packed := make([]*gemm.PackedB[float32], 16)
	for xi := range packed {
		packed[xi] = gemm.PackB(false, in, out, u[xi*in*out:(xi+1)*in*out], out)
	}
	return packed
}

// winogradPlan lays out a Winograd convolution g with nout outputs over
// n images: each core pads a chunk of nb images channels last, with a
// zero row and column more where OH or OW is odd so that every tile is
// whole, and takes the chunk's tiles tb at a time through the transforms
// and the GEMMs. The planes' strides vs and ms are odd multiples of 64
// bytes (tileStride), so that the transforms' 16 streams fall in
// different L1 sets: at 8 KiB apart (128 tiles of 16 channels) they
// would all share one set and evict each other.
type winogradPlan struct {
	g, tiled      im2col.Geom // the convolution, and its window of whole tiles
	nout          int
	th, tw, tiles int // tiles down, across and per image
	nb, tb        int // images per chunk, tiles per block
	vs, ms        int // plane strides of the transformed inputs and outputs
}

func newWinogradPlan(g im2col.Geom, n, nout int) winogradPlan {
	p := winogradPlan{g: g, tiled: g, nout: nout, th: (g.OH + 1) / 2, tw: (g.OW + 1) / 2}
	p.tiled.OH, p.tiled.OW = 2*p.th, 2*p.tw
	p.tiles = p.th * p.tw
	p.tb = winogradTiles(g.C, nout)
	p.nb = max(1, min(n, p.tb/p.tiles)) // small images share a block
	p.tb = min(p.tb, p.nb*p.tiles)
	p.vs, p.ms = tileStride(p.tb*g.C), tileStride(p.tb*nout)
	return p
}

// padChunk writes images [i0, i0+imgs) of x [C, H, W] into xp as
// consecutive windows of whole tiles.
func (p *winogradPlan) padChunk(x []float32, i0, imgs int, xp []float32) {
	win, chw := p.tiled.PaddedLen(), p.g.C*p.g.H*p.g.W
	for i := range imgs {
		im2col.Pad(p.tiled, x[(i0+i)*chw:], xp[i*win:(i+1)*win])
	}
}

// blocks calls fn(q0, nt) for the blocks of a chunk of imgs images: nt
// tiles from tile q0 on.
func (p *winogradPlan) blocks(imgs int, fn func(q0, nt int)) {
	for q0 := 0; q0 < imgs*p.tiles; q0 += p.tb {
		fn(q0, min(p.tb, imgs*p.tiles-q0))
	}
}

// runs calls fn for the tiles [q0, q0+nt) of a chunk in runs along one
// tile row: fn(q, run, img, ty, tx) for the run of run tiles from tile q
// on, tile (ty, tx) of image img.
func (p *winogradPlan) runs(q0, nt int, fn func(q, run, img, ty, tx int)) {
	for q := q0; q < q0+nt; {
		img, r := q/p.tiles, q%p.tiles
		ty, tx := r/p.tw, r%p.tw
		run := min(p.tw-tx, q0+nt-q)
		fn(q, run, img, ty, tx)
		q += run
	}
}

// inputs writes the transformed tiles [q0, q0+nt) of the padded chunk xp
// into the planes v.
func (p *winogradPlan) inputs(xp, v []float32, q0, nt int) {
	c, pw, win := p.g.C, p.tiled.PaddedW(), p.tiled.PaddedLen()
	p.runs(q0, nt, func(q, run, img, ty, tx int) {
		winograd.Input(run, xp[img*win+(2*ty*pw+2*tx)*c:], pw*c, c, v[(q-q0)*c:], p.vs)
	})
}

// outputTiles is the layout of a chunk's outputs (or output gradients)
// in whole tiles, channels last: [imgs][2·th][2·tw][nout].
func (p *winogradPlan) outputTiles() im2col.Geom {
	return im2col.Geom{C: p.nout, H: p.g.OH, W: p.g.OW, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1,
		OH: 2 * p.th, OW: 2 * p.tw}
}

// winogradConvolve is rowsData's and rowsDataAdjoint's convolution by
// F(2×2, 3×3): y = conv(x, w) + b for n images x [C, H, W] (geometry g),
// nout outputs and b nil or [nout], with the weights of a conv2d w [nout,
// C, 3, 3] or, flipped, those of the data gradient of one with w [C,
// nout, 3, 3] (winogradWeights). Per block: the input transform, the 16
// GEMMs against the packed planes of transformed weights and the output
// transform (which adds the bias) into the chunk's channels-last outputs,
// laid out NCHW at the end of the chunk.
func winogradConvolve(g im2col.Geom, n, nout int, x, w []float32, flipped bool, b, y []float32) {
	ub := scratch.Get[float32](16 * g.C * nout)
	defer scratch.Put(ub)
	wout, win := nout, g.C
	if flipped {
		wout, win = g.C, nout
	}
	winogradConvolvePacked(g, n, nout, x, winogradWeights(wout, win, w, flipped, *ub), b, y)
}

// winogradConvolvePacked is winogradConvolve with the weights' 16 planes
// already transformed and packed (winogradWeights; Prepare keeps them).
func winogradConvolvePacked(g im2col.Geom, n, nout int, x []float32, packed []*gemm.PackedB[float32], b, y []float32) {
	pl := newWinogradPlan(g, n, nout)
	bias := b
	if bias == nil {
		zb := scratch.Get[float32](nout)
		defer scratch.Put(zb)
		bias = *zb
		clear(bias)
	}
	par.ForBatchOf(n, winogradForwardJob{g: g, pl: pl, nout: nout, x: x, packed: packed, bias: bias, y: y,
		mul: corePacked[float32](n)})
}

// winogradForwardJob is winogradConvolvePacked's loop over runs of images.
type winogradForwardJob struct {
	g       im2col.Geom
	pl      winogradPlan
	nout    int
	x       []float32
	packed  []*gemm.PackedB[float32]
	bias, y []float32
	mul     packedFunc[float32]
}

func (j *winogradForwardJob) Range(_, lo, hi int) {
	g, pl, nout, x, y, bias := j.g, &j.pl, j.nout, j.x, j.y, j.bias
	p, ot := g.OH*g.OW, pl.outputTiles()
	ow := ot.PaddedW()
	xb, vb, mb, ob := scratch.Get[float32](pl.nb*pl.tiled.PaddedLen()), scratch.Get[float32](16*pl.vs),
		scratch.Get[float32](16*pl.ms), scratch.Get[float32](pl.nb*ot.PaddedLen())
	defer scratch.Put(xb)
	defer scratch.Put(vb)
	defer scratch.Put(mb)
	defer scratch.Put(ob)
	xp, v, m, out := *xb, *vb, *mb, *ob
	for i0 := lo; i0 < hi; i0 += pl.nb {
		imgs := min(pl.nb, hi-i0)
		pl.padChunk(x, i0, imgs, xp)
		pl.blocks(imgs, func(q0, nt int) {
			pl.inputs(xp, v, q0, nt)
			for xi, pb := range j.packed {
				j.mul(false, nt, 1, v[xi*pl.vs:], g.C, pb, 0, m[xi*pl.ms:], nout)
			}
			pl.runs(q0, nt, func(q, run, img, ty, tx int) {
				winograd.Output(run, m[(q-q0)*nout:], pl.ms, nout, bias,
					out[img*ot.PaddedLen()+(2*ty*ow+2*tx)*nout:], ow*nout)
			})
		})
		for i := range imgs {
			yi, oi := y[(i0+i)*nout*p:(i0+i+1)*nout*p], out[i*ot.PaddedLen():]
			for oh := 0; oh < g.OH; oh++ {
				im2col.Transpose(yi[oh*g.OW:], p, oi[oh*ow*nout:], nout, g.OW, nout, false)
			}
		}
	}
}

// winogradFilter adds the filter gradient of the convolution g (nout
// outputs over n images x) with output gradient dy into dw [nout, C, 3,
// 3]: per block, the input transform of x and the adjoint output
// transform of dy (padded with zeros to whole tiles), and 16 GEMMs that
// sum Vᵀ·dM over the blocks into the core's transformed gradient dU
// [16][C][nout]; the cores' sums are added in order and taken back
// through Gᵀ·dU·G.
func winogradFilter(g im2col.Geom, n, nout int, x, dy, dw []float32) {
	pl := newWinogradPlan(g, n, nout)
	size := 16 * g.C * nout
	sums := newCoreSums[float32](n, size)
	ot, mul := pl.outputTiles(), coreGemm[float32](n)
	ow, p := ot.PaddedW(), g.OH*g.OW
	par.ForBatch(n, func(worker, lo, hi int) {
		xb, yb, vb, mb := scratch.Get[float32](pl.nb*pl.tiled.PaddedLen()), scratch.Get[float32](pl.nb*ot.PaddedLen()),
			scratch.Get[float32](16*pl.vs), scratch.Get[float32](16*pl.ms)
		defer scratch.Put(xb)
		defer scratch.Put(yb)
		defer scratch.Put(vb)
		defer scratch.Put(mb)
		xp, dyp, v, dm, du := *xb, *yb, *vb, *mb, *sums[worker]
		for i0 := lo; i0 < hi; i0 += pl.nb {
			imgs := min(pl.nb, hi-i0)
			pl.padChunk(x, i0, imgs, xp)
			for i := range imgs {
				im2col.Pad(ot, dy[(i0+i)*nout*p:], dyp[i*ot.PaddedLen():(i+1)*ot.PaddedLen()])
			}
			pl.blocks(imgs, func(q0, nt int) {
				pl.inputs(xp, v, q0, nt)
				pl.runs(q0, nt, func(q, run, img, ty, tx int) {
					winograd.OutputAdjoint(run, dyp[img*ot.PaddedLen()+(2*ty*ow+2*tx)*nout:], ow*nout, nout,
						dm[(q-q0)*nout:], pl.ms)
				})
				for xi := range 16 {
					mul(true, false, g.C, nout, nt, 1, v[xi*pl.vs:], g.C, dm[xi*pl.ms:], nout, 1, du[xi*g.C*nout:], nout)
				}
			})
		}
	})
	tb := scratch.Get[float32](size)
	defer scratch.Put(tb)
	du := *tb
	clear(du)
	sums.addTo(du)
	forRuns(nout, func(o0, o1 int) {
		for c := range g.C {
			for o := o0; o < o1; o++ {
				var u [16]float64
				for xi := range u {
					u[xi] = float64(du[(xi*g.C+c)*nout+o])
				}
				dst := dw[(o*g.C+c)*9 : (o*g.C+c+1)*9]
				for t, v := range winograd.FilterAdjoint(u) {
					dst[t] += float32(v)
				}
			}
		}
	})
}

// forRuns calls fn(o0, o1) for runs of at most 16 of n output channels,
// the runs spread over the cores: the transformed weights' planes hold a
// channel's values across the outputs, so a run reads or writes whole
// cache lines of each plane.
func forRuns(n int, fn func(o0, o1 int)) {
	const run = 16
	par.ForBatch((n+run-1)/run, func(_, lo, hi int) {
		for o0 := lo * run; o0 < min(hi*run, n); o0 += run {
			fn(o0, min(o0+run, n))
		}
	})
}

// tileStride is the stride of a plane of n values: the least odd multiple
// of 16 elements (64-byte lines in float32), so that the planes fall in
// different sets of the L1 cache (ops' flash attention strides its score
// tiles by the same rule).
func tileStride(n int) int {
	lines := (n + 15) / 16
	return (lines | 1) * 16
}
