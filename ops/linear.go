package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "linear", Inputs: []string{"x", "w", "b"}, Grads: []int{0, 1, 2},
		Make: MakeOp(func(NoAttrs) Op { return LinearOp() }), CUDA: DeviceKernel})
}

// linearOp is y = x·W + b over the last axis of x (Keras Dense without the
// activation): x [..., in], W [in, out], b [out] (optional), y [..., out].
// It is one op rather than matmul plus add so that the bias add rides in
// the GEMM's output pass and its gradient is a plain column sum.
type linearOp struct {
	p *PackedWeights // W packed once (LinearPackedOp), used when W is the packed tensor; or nil
}

// LinearOp returns the op x·W (+ b); pass two inputs for no bias.
func LinearOp() Op { return linearOp{} }

// Linear returns x·W + b; b may be nil.
func Linear(x, w, b *tensor.Tensor) (*tensor.Tensor, error) {
	if b == nil {
		return run(LinearOp(), x, w)
	}
	return run(LinearOp(), x, w, b)
}

func (linearOp) Name() string { return "linear" }

// Check is linear's device-free check (Checker).
func (o linearOp) Check(in []*tensor.Tensor) error {
	if len(in) != 2 && len(in) != 3 {
		return Errorf("linear", in, "want inputs x, w and optional b")
	}
	if _, err := checkShapes("linear", in, len(in)); err != nil {
		return err
	}
	x, w := in[0], in[1]
	if x.Rank() < 1 || w.Rank() != 2 || x.Dim(-1) != w.Dim(0) {
		return Errorf("linear", in, "want x [..., in] and w [in, out] with matching in")
	}
	if len(in) == 3 && (in[2].Rank() != 1 || in[2].Dim(0) != w.Dim(1)) {
		return Errorf("linear", in, "want bias [%d]", w.Dim(1))
	}
	return nil
}

func (o linearOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 2 && len(in) != 3 {
		return nil, Errorf("linear", in, "want inputs x, w and optional b")
	}
	dt, err := checkFloat("linear", in, len(in))
	if err != nil {
		return nil, err
	}
	if err := o.Check(in); err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	outShape := append(x.Shape()[:x.Rank()-1].Clone(), w.Dim(1))
	out := tensor.Empty(dt, outShape...) // the product has beta 0: written whole
	o.into(out, in)
	return out, nil
}

// into runs the product on validated inputs into out, of the output's shape.
func (o linearOp) into(out *tensor.Tensor, in []*tensor.Tensor) {
	x, w, dt := in[0], in[1], out.DType()
	m, k, n := out.Size()/max(w.Dim(1), 1), w.Dim(0), w.Dim(1)
	if n == 0 {
		m = out.Shape()[:out.Rank()-1].Size()
	}
	var b *tensor.Tensor
	if len(in) == 3 {
		b = in[2]
	}
	switch dt {
	case tensor.Float32:
		if pw := packedAs[float32](o.p, w); pw != nil && k > 0 {
			linearPackedKernel(m, x.Float32s(), pw, floats[float32](b), out.Float32s())
			break
		}
		linearKernel(m, n, k, x.Float32s(), w.Float32s(), floats[float32](b), out.Float32s())
	case tensor.Float64:
		if pw := packedAs[float64](o.p, w); pw != nil && k > 0 {
			linearPackedKernel(m, x.Float64s(), pw, floats[float64](b), out.Float64s())
			break
		}
		linearKernel(m, n, k, x.Float64s(), w.Float64s(), floats[float64](b), out.Float64s())
	}
}

func linearKernel[T tensor.Float](m, n, k int, x, w, b, y []T) {
	beta := T(0)
	if b != nil {
		fillRows(y, b, m)
		beta = 1
	}
	gemm.Gemm(false, false, m, n, k, 1, x, k, w, n, beta, y, n)
}

// fillRows copies the row b into each of y's m rows, the rows spread over
// the cores when there are many (par.Rows): the bias a product then adds
// to, which a decoder's [256, 7817] projection copied on one core.
func fillRows[T tensor.Float](y, b []T, m int) {
	par.RowsOf(m, len(b), fillRowsJob[T]{y, b})
}

// fillRowsJob is fillRows' loop body.
type fillRowsJob[T tensor.Float] struct{ y, b []T }

func (j *fillRowsJob[T]) Range(_, lo, hi int) {
	n := len(j.b)
	for i := lo; i < hi; i++ {
		copy(j.y[i*n:(i+1)*n], j.b)
	}
}

func (linearOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	x, w := in[0], in[1]
	k, n := w.Dim(0), w.Dim(1)
	m := out.Size() / max(n, 1)
	if n == 0 {
		m = out.Shape()[:out.Rank()-1].Size()
	}
	grads := wantedGrads(in, need)
	var gb *tensor.Tensor
	if len(in) == 3 {
		gb = grads[2]
	}
	switch out.DType() {
	case tensor.Float32:
		linearGrad(m, n, k, x.Float32s(), w.Float32s(), gout.Float32s(), floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](gb))
	case tensor.Float64:
		linearGrad(m, n, k, x.Float64s(), w.Float64s(), gout.Float64s(), floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](gb))
	}
	return grads, nil
}

// linearGrad: dx = dy·Wᵀ, dW = xᵀ·dy, db = Σ_rows dy.
func linearGrad[T tensor.Float](m, n, k int, x, w, dy, dx, dw, db []T) {
	if dx != nil {
		gemm.Gemm(false, true, m, k, n, 1, dy, n, w, n, 0, dx, k)
	}
	if dw != nil {
		gemm.Gemm(true, false, k, n, m, 1, x, k, dy, n, 0, dw, n)
	}
	if db != nil {
		for i := 0; i < m; i++ {
			for j, v := range dy[i*n : (i+1)*n] {
				db[j] += v
			}
		}
	}
}
