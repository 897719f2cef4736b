package conv

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

// Prepared is a convolution's weights laid out once for its forward
// algorithm, for the many forward passes of an inference plan with
// unchanged weights: Winograd's 16 planes of transformed filters
// (G·w·Gᵀ, Lavin and Gray 2016), packed for the GEMM, or the channels-last
// kernels' reordered weights, which Forward otherwise remakes at every
// call. It serves any batch size: the layout depends on the geometry of
// one image alone.
type Prepared[T tensor.Float] struct {
	g    Geom
	wino []*gemm.PackedB[float32] // Winograd's planes, or nil
	u    []float32                // the planes' storage, which the packings read
	rows []T                      // rowWeights' layout, or nil
}

// Prepare returns w [Cout, C/groups, KH, KW] laid out for g's forward
// algorithm, or nil when that algorithm reads w as given (im2col,
// depthwise). The result does not alias w.
func Prepare[T tensor.Float](g Geom, w []T) *Prepared[T] {
	if !g.rowsPay() {
		return nil
	}
	p := &Prepared[T]{g: g}
	if winogradPays[T](g.Geom, g.Cout) {
		p.u = make([]float32, 16*g.C*g.Cout)
		p.wino = winogradWeights(g.Cout, g.C, any(w).([]float32), false, p.u)
		return p
	}
	p.rows = make([]T, len(w))
	rowWeights(g, w, p.rows, false)
	return p
}

// Fits reports whether p was prepared for g, whatever its batch size.
func (p *Prepared[T]) Fits(g Geom) bool {
	if p == nil {
		return false
	}
	h := p.g
	h.N = g.N
	return h == g
}

// Forward computes y = conv(x, w) + b as the package's Forward does, with
// the prepared weights; p must fit g.
func (p *Prepared[T]) Forward(g Geom, x, b, y []T) {
	if p.wino != nil {
		winogradConvolve(g.Geom, g.N, g.Cout, any(x).([]float32), nil, false, any(b).([]float32), any(y).([]float32), p.wino)
		return
	}
	rowsConvolve(g.Geom, g.N, g.Cout, x, p.rows, b, y)
}
