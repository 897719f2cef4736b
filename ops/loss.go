package ops

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// LossReduction says how a loss op folds its per-example losses into its
// output: the losses softmax_cross_entropy(_soft), sigmoid_cross_entropy
// and mse share it.
type LossReduction int

const (
	// LossMean (the default) is the mean of the per-example losses, a
	// scalar. Over an empty batch (no per-example losses) it is an error
	// naming the op and the shapes: the mean of nothing is undefined, and
	// a loss of 0 there would hide a batch that lost its examples.
	LossMean LossReduction = iota
	// LossSum is the sum of the per-example losses, a scalar: 0 over an
	// empty batch.
	LossSum
	// LossNone keeps one loss per example: an empty tensor over an empty
	// batch.
	LossNone
)

func (r LossReduction) String() string {
	switch r {
	case LossMean:
		return "mean"
	case LossSum:
		return "sum"
	case LossNone:
		return "none"
	}
	return fmt.Sprintf("LossReduction(%d)", int(r))
}

// LossAttrs are the losses' attributes: how they fold the per-example
// losses.
type LossAttrs struct {
	Reduction LossReduction `json:"reduction"`
}

// UnmarshalText reads a reduction by its name: "mean" (or ""), "sum" or
// "none", as the parity goldens write it.
func (r *LossReduction) UnmarshalText(b []byte) error {
	switch string(b) {
	case "", "mean":
		*r = LossMean
	case "sum":
		*r = LossSum
	case "none":
		*r = LossNone
	default:
		return fmt.Errorf("unknown reduction %q (want mean, sum or none)", b)
	}
	return nil
}

// MarshalText writes the reduction's name.
func (r LossReduction) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// checkReduction rejects a reduction other than the three above.
func checkReduction(op string, in []*tensor.Tensor, r LossReduction) error {
	if r != LossMean && r != LossSum && r != LossNone {
		return Errorf(op, in, "unknown reduction %v (want LossMean, LossSum or LossNone)", r)
	}
	return nil
}

// checkMeanOfSome rejects LossMean over n = 0 per-example losses.
func checkMeanOfSome(op string, in []*tensor.Tensor, r LossReduction, n int) error {
	if r == LossMean && n == 0 {
		return Errorf(op, in, "empty batch: the mean of no per-example losses is undefined; want at least one example (reduction sum gives 0, none an empty tensor)")
	}
	return nil
}

// reduceLoss returns the output of a loss op in dtype dt from its
// per-example losses, which have the given shape under LossNone.
func reduceLoss(dt tensor.DType, r LossReduction, loss []float64, shape tensor.Shape) *tensor.Tensor {
	if r == LossNone {
		out := tensor.Zeros(dt, shape...)
		for i, v := range loss {
			out.SetAt(i, v)
		}
		return out
	}
	s := 0.0
	for _, v := range loss {
		s += v
	}
	if r == LossMean && len(loss) > 0 {
		s /= float64(len(loss))
	}
	out := tensor.Zeros(dt)
	out.SetAt(0, s)
	return out
}

// lossWeights returns, for each of n per-example losses, the upstream
// gradient reaching it through the reduction: gout itself under LossNone,
// gout's one element under LossSum, and that divided by n under LossMean.
func lossWeights(r LossReduction, gout *tensor.Tensor, n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		switch r {
		case LossNone:
			w[i] = gout.At(i)
		case LossSum:
			w[i] = gout.At(0)
		case LossMean:
			w[i] = gout.At(0) / float64(n)
		}
	}
	return w
}

// pointwiseLossOp is a loss with one term per element of two float inputs
// of one shape, fn(a, b) with partials fn.da and fn.db (binary.go's
// binaryFn), folded by r; LossNone keeps the inputs' shape.
// sigmoid_cross_entropy and mse are its instances.
type pointwiseLossOp struct {
	name string
	r    LossReduction
	fn   binaryFn
}

func (o *pointwiseLossOp) Name() string { return o.name }

func (o *pointwiseLossOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat(o.name, in, 2)
	if err != nil {
		return nil, err
	}
	if err := checkReduction(o.name, in, o.r); err != nil {
		return nil, err
	}
	if !tensor.SameShape(in[0], in[1]) {
		return nil, Errorf(o.name, in, "want inputs of one shape")
	}
	if err := checkMeanOfSome(o.name, in, o.r, in[0].Size()); err != nil {
		return nil, err
	}
	loss := make([]float64, in[0].Size())
	switch dt {
	case tensor.Float32:
		pointwiseLossKernel(in[0].Float32s(), in[1].Float32s(), loss, o.fn.f)
	case tensor.Float64:
		pointwiseLossKernel(in[0].Float64s(), in[1].Float64s(), loss, o.fn.f)
	}
	return reduceLoss(dt, o.r, loss, in[0].Shape()), nil
}

func pointwiseLossKernel[T tensor.Float](a, b []T, loss []float64, f func(a, b float64) float64) {
	for i := range a {
		loss[i] = f(float64(a[i]), float64(b[i]))
	}
}

func (o *pointwiseLossOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	w := lossWeights(o.r, gout, in[0].Size())
	grads := make([]*tensor.Tensor, 2)
	for k, d := range []func(a, b, y float64) float64{o.fn.da, o.fn.db} {
		if !need[k] {
			continue
		}
		grads[k] = tensor.ZerosLike(in[k])
		switch out.DType() {
		case tensor.Float32:
			pointwiseLossGrad(in[0].Float32s(), in[1].Float32s(), w, grads[k].Float32s(), d)
		case tensor.Float64:
			pointwiseLossGrad(in[0].Float64s(), in[1].Float64s(), w, grads[k].Float64s(), d)
		}
	}
	return grads, nil
}

// pointwiseLossGrad writes g = w·d(a, b), w being each term's upstream
// gradient (the partials of these losses do not use the term's value).
func pointwiseLossGrad[T tensor.Float](a, b []T, w []float64, g []T, d func(a, b, y float64) float64) {
	for i := range g {
		g[i] = T(w[i] * d(float64(a[i]), float64(b[i]), 0))
	}
}
