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

// linearPackedOp is linearOp whose forward product reads W from a packing
// made once (PackedWeights) when its W input is the packed tensor; the
// result and the backward pass are linearOp's.
type linearPackedOp struct {
	linearOp
	p *PackedWeights
}

// LinearPackedOp returns the op x·W (+ b) that takes its W from p when the
// op's W input is the tensor p packed, and runs as LinearOp otherwise.
func LinearPackedOp(p *PackedWeights) Op { return linearPackedOp{p: p} }

func (o linearPackedOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if o.p == nil || len(in) < 2 || in[1] != o.p.w || in[0] == nil || in[0].Storage() != nil ||
		in[0].DType() != o.p.w.DType() || (len(in) == 3 && (in[2] == nil || in[2].DType() != o.p.w.DType())) {
		return o.linearOp.Forward(in)
	}
	if len(in) != 2 && len(in) != 3 {
		return nil, Errorf("linear", in, "want inputs x, w and optional b")
	}
	x, w := in[0], in[1]
	if x.Rank() < 1 || x.Dim(-1) != w.Dim(0) || x.Dim(-1) == 0 {
		return o.linearOp.Forward(in) // its checks and its empty cases
	}
	if len(in) == 3 && (in[2].Rank() != 1 || in[2].Dim(0) != w.Dim(1)) {
		return nil, Errorf("linear", in, "want bias [%d]", w.Dim(1))
	}
	outShape := append(x.Shape()[:x.Rank()-1].Clone(), w.Dim(1))
	out := tensor.Empty(x.DType(), outShape...)
	m := x.Size() / x.Dim(-1)
	var b *tensor.Tensor
	if len(in) == 3 {
		b = in[2]
	}
	switch x.DType() {
	case tensor.Float32:
		linearPackedKernel(m, x.Float32s(), o.p.f32, floats[float32](b), out.Float32s())
	case tensor.Float64:
		linearPackedKernel(m, x.Float64s(), o.p.f64, floats[float64](b), out.Float64s())
	}
	return out, nil
}

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
