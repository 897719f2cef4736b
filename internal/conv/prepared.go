package conv

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

// Prepared is a constant filter w [Cout, C/Groups, KH, KW] made ready
// once for the forward passes of many convolutions with it, as an
// inference engine does with a model's weights (ONNX Runtime's and
// oneDNN's prepacked convolution weights): the Winograd-transformed planes
// of F(2×2, 3×3), packed for their GEMMs, where winogradPays, or the
// channels-last weight matrix of rowWeights where the channels-last
// kernels take the convolution; the pointwise, depthwise and im2col
// kernels read w as it lies, so for them it holds nothing. Forward
// through it computes the same operations in the same order as Forward,
// so its results are bit-identical. It is read-only after Prepare: the
// packings are made under gemm.PackedB's sync.Once, so concurrent
// Forwards may share it.
type Prepared[T tensor.Float] struct {
	key  prepKey
	w    []T                      // the filter it was made from
	u    []float32                // Winograd's transformed weights, which wino packs
	wino []*gemm.PackedB[float32] // their 16 planes packed, or nil
	rows []T                      // rowWeights(w), or nil
	pk   *rowsPacked[T]           // rows' GEMM packings, with rows
}

// rowsPacked holds the GEMM packings of a channels-last weight matrix wr
// [nout, K] (rowWeights) as the products of rowsConvolve and gridConvolve
// take it transposed: whole (K × nout) for the row matrix, and per tap
// (gridTaps: its columns col..col+k) for the implicit GEMM. The taps
// depend on the kernel, the dilation and the channels only, not on the
// padded width, so one set serves every image size. The packings are
// made at their first product (gemm.PackB).
type rowsPacked[T tensor.Float] struct {
	whole *gemm.PackedB[T]
	taps  []*gemm.PackedB[T]
}

func packRows[T tensor.Float](g Geom, wr []T) *rowsPacked[T] {
	k := g.Rows()
	pk := &rowsPacked[T]{whole: gemm.PackB(true, k, g.Cout, wr, k)}
	gridTaps(g.Geom, func(_, col, kt int) {
		pk.taps = append(pk.taps, gemm.PackB(true, kt, g.Cout, wr[col:], k))
	})
	return pk
}

// prepKey is what of a geometry the prepared weights depend on: the
// filter's shape and groups, and the stride and dilation that decide
// Winograd; the batch, the image size and the padding are free.
type prepKey struct {
	cout, c, groups, kh, kw, sh, sw, dh, dw int
}

func keyOf(g Geom) prepKey {
	return prepKey{g.Cout, g.C, g.Groups, g.KH, g.KW, g.SH, g.SW, g.DH, g.DW}
}

// Prepare returns w made ready for the forward passes of convolutions of
// g's filter shape, groups, stride and dilation (any batch, image size
// and padding). w must not change while the result is in use.
func Prepare[T tensor.Float](g Geom, w []T) *Prepared[T] {
	p := &Prepared[T]{key: keyOf(g), w: w}
	switch {
	case g.pointwiseFilter(): // pointwiseForward reads w as it lies
	case g.rowsPay() && winogradPays[T](g.Geom, g.Cout):
		p.u = make([]float32, 16*g.C*g.Cout)
		p.wino = winogradWeights(g.Cout, g.C, any(w).([]float32), false, p.u)
	case g.rowsPay():
		p.rows = make([]T, len(w))
		rowWeights(g, w, p.rows, false)
		p.pk = packRows(g, p.rows)
	}
	return p
}

// fits reports whether p was made from w for a geometry like g's.
func (p *Prepared[T]) fits(g Geom, w []T) bool {
	return p != nil && p.key == keyOf(g) && len(p.w) == len(w) && (len(w) == 0 || &p.w[0] == &w[0])
}

// ForwardPrepared is Forward (not transposed) taking the weights from p
// when p was prepared from w for a geometry like g's, and computing
// Forward(g, false, x, w, b, y) otherwise.
func ForwardPrepared[T tensor.Float](g Geom, p *Prepared[T], x, w, b, y []T) {
	if !p.fits(g, w) || g.pointwise() {
		Forward(g, false, x, w, b, y)
		return
	}
	switch {
	case p.wino != nil:
		winogradConvolvePacked(g.Geom, g.N, g.Cout, any(x).([]float32), p.wino, any(b).([]float32), any(y).([]float32))
	case p.rows != nil:
		rowsConvolve(g.Geom, g.N, g.Cout, x, p.rows, b, y, p.pk)
	default:
		Forward(g, false, x, w, b, y)
	}
}
