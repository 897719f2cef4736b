package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

// PackedWeights is a linear layer's weight matrix W [in, out], in host
// memory, packed once into the GEMM's panel layout (gemm.PackB) for the
// many products an inference loop makes with unchanged weights: a
// decoder's output projection at every step of a beam search packs its
// [Hidden, Vocabulary] weights at every call otherwise.
type PackedWeights struct {
	w   *tensor.Tensor
	f32 *gemm.PackedB[float32]
	f64 *gemm.PackedB[float64]
}

// PackWeights packs w [in, out] (float32 or float64, host memory). The
// packing is a copy: a later change to w is not seen by products that
// use it, which is why only an inference tape packs (graph.Linear).
func PackWeights(w *tensor.Tensor) (*PackedWeights, error) {
	in := []*tensor.Tensor{w}
	if w == nil || w.Rank() != 2 || w.Storage() != nil {
		return nil, Errorf("linear", in, "want weights [in, out] in host memory to pack")
	}
	p := &PackedWeights{w: w}
	k, n := w.Dim(0), w.Dim(1)
	switch w.DType() {
	case tensor.Float32:
		p.f32 = gemm.PackB(false, k, n, w.Float32s(), n)
	case tensor.Float64:
		p.f64 = gemm.PackB(false, k, n, w.Float64s(), n)
	default:
		return nil, Errorf("linear", in, "want float32 or float64 weights to pack")
	}
	return p, nil
}

// packedAs returns p's packing of t in element type T, or nil when p is
// nil or packs another tensor (or another type).
func packedAs[T tensor.Float](p *PackedWeights, t *tensor.Tensor) *gemm.PackedB[T] {
	if p == nil || p.w != t {
		return nil
	}
	var z T
	switch any(z).(type) {
	case float32:
		if p.f32 != nil {
			return any(p.f32).(*gemm.PackedB[T])
		}
	case float64:
		if p.f64 != nil {
			return any(p.f64).(*gemm.PackedB[T])
		}
	}
	return nil
}

// LinearPackedOp returns LinearOp taking W from the packing p when the
// op's W input is the tensor p packed (the results are LinearOp's), and
// running as LinearOp otherwise.
func LinearPackedOp(p *PackedWeights) Op { return linearOp{p: p} }

// linearPackedKernel is linearKernel with W from its packing.
func linearPackedKernel[T tensor.Float](m int, x []T, w *gemm.PackedB[T], b, y []T) {
	k, n := w.Dims()
	beta := T(0)
	if b != nil {
		fillRows(y, b, m)
		beta = 1
	}
	gemm.GemmPacked(false, m, 1, x, k, w, beta, y, n)
}
