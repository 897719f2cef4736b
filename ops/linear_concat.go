package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "linear_concat", Inputs: []string{"a", "b", "w", "bias"}, Grads: []int{0, 1, 2, 3},
		Make: MakeOp(func(NoAttrs) Op { return LinearConcatOp() }), CUDA: DeviceFallback})
}

// linearConcatOp is y = [a, b]·W + bias, the linear op over the
// concatenation of a [..., ka] and b [..., kb] along the last axis, without
// building it: y = a·W[:ka] + b·W[ka:] + bias, with W [ka+kb, out]. It is
// Fluid's fc over a list of inputs (each with its own weight, here the row
// blocks of one W so a checkpoint holds the same tensor as linear over a
// concat). The stacked LSTM nets feed each fc both the previous fc and the
// previous LSTM; a concat would copy both forward and split the gradient
// backward.
type linearConcatOp struct{}

// LinearConcatOp returns the op [a, b]·W (+ bias); pass three inputs for
// no bias.
func LinearConcatOp() Op { return linearConcatOp{} }

// LinearConcat returns [a, b]·W + bias along the last axis; bias may be nil.
func LinearConcat(a, b, w, bias *tensor.Tensor) (*tensor.Tensor, error) {
	if bias == nil {
		return run(LinearConcatOp(), a, b, w)
	}
	return run(LinearConcatOp(), a, b, w, bias)
}

func (linearConcatOp) Name() string { return "linear_concat" }

// linearConcatShapes checks the inputs and returns the rows m, the widths
// ka and kb and the output width n.
func linearConcatShapes(in []*tensor.Tensor) (m, ka, kb, n int, err error) {
	const name = "linear_concat"
	if len(in) != 3 && len(in) != 4 {
		return 0, 0, 0, 0, Errorf(name, in, "want inputs a, b, w and optional bias")
	}
	if _, err := checkFloat(name, in, len(in)); err != nil {
		return 0, 0, 0, 0, err
	}
	a, b, w := in[0], in[1], in[2]
	if a.Rank() < 1 || b.Rank() != a.Rank() || !a.Shape()[:a.Rank()-1].Equal(b.Shape()[:b.Rank()-1]) {
		return 0, 0, 0, 0, Errorf(name, in, "want a [..., ka] and b [..., kb] with the same leading axes")
	}
	ka, kb = a.Dim(-1), b.Dim(-1)
	if w.Rank() != 2 || w.Dim(0) != ka+kb {
		return 0, 0, 0, 0, Errorf(name, in, "want w [%d, out] (ka + kb rows)", ka+kb)
	}
	n = w.Dim(1)
	if len(in) == 4 && (in[3].Rank() != 1 || in[3].Dim(0) != n) {
		return 0, 0, 0, 0, Errorf(name, in, "want bias [%d]", n)
	}
	return a.Shape()[:a.Rank()-1].Size(), ka, kb, n, nil
}

func (o linearConcatOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	m, ka, kb, n, err := linearConcatShapes(in)
	if err != nil {
		return nil, err
	}
	a := in[0]
	out := tensor.Empty(a.DType(), append(a.Shape()[:a.Rank()-1].Clone(), n)...)
	o.into(out, in, m, ka, kb, n)
	return out, nil
}

// ForwardInto is linear_concat's Into.
func (o linearConcatOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	m, ka, kb, n, err := linearConcatShapes(in)
	if err != nil {
		return err
	}
	if err := checkOutLast("linear_concat", in, out, in[0], n); err != nil {
		return err
	}
	o.into(out, in, m, ka, kb, n)
	return nil
}

// into runs the kernel in the inputs' dtype; every element of out is written.
func (linearConcatOp) into(out *tensor.Tensor, in []*tensor.Tensor, m, ka, kb, n int) {
	a := in[0]
	var bias *tensor.Tensor
	if len(in) == 4 {
		bias = in[3]
	}
	switch a.DType() {
	case tensor.Float32:
		linearConcatKernel(m, n, ka, kb, a.Float32s(), in[1].Float32s(), in[2].Float32s(), floats[float32](bias), out.Float32s())
	case tensor.Float64:
		linearConcatKernel(m, n, ka, kb, a.Float64s(), in[1].Float64s(), in[2].Float64s(), floats[float64](bias), out.Float64s())
	}
}

// linearConcatKernel writes a·W[:ka] + bias into y, then adds b·W[ka:].
func linearConcatKernel[T tensor.Float](m, n, ka, kb int, a, b, w, bias, y []T) {
	linearKernel(m, n, ka, a, w[:ka*n], bias, y)
	gemm.Gemm(false, false, m, n, kb, 1, b, kb, w[ka*n:], n, 1, y, n)
}

// Backward splits the linear op's gradients by W's row blocks: da = dy·W[:ka]ᵀ,
// db = dy·W[ka:]ᵀ, dW[:ka] = aᵀ·dy, dW[ka:] = bᵀ·dy, dbias = Σ_rows dy.
func (linearConcatOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	m, ka, kb, n, err := linearConcatShapes(in)
	if err != nil {
		return nil, err
	}
	grads := wantedGrads(in, need)
	var gbias *tensor.Tensor
	if len(in) == 4 {
		gbias = grads[3]
	}
	switch out.DType() {
	case tensor.Float32:
		linearConcatGrad(m, n, ka, kb, in[0].Float32s(), in[1].Float32s(), in[2].Float32s(), gout.Float32s(),
			floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](grads[2]), floats[float32](gbias))
	case tensor.Float64:
		linearConcatGrad(m, n, ka, kb, in[0].Float64s(), in[1].Float64s(), in[2].Float64s(), gout.Float64s(),
			floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](grads[2]), floats[float64](gbias))
	}
	return grads, nil
}

func linearConcatGrad[T tensor.Float](m, n, ka, kb int, a, b, w, dy, da, db, dw, dbias []T) {
	var dwa, dwb []T
	if dw != nil {
		dwa, dwb = dw[:ka*n], dw[ka*n:]
	}
	linearGrad(m, n, ka, a, w[:ka*n], dy, da, dwa, dbias)
	linearGrad(m, n, kb, b, w[ka*n:], dy, db, dwb, nil)
}
