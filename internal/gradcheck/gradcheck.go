// Package gradcheck compares analytic gradients with float64 central
// differences, as PyTorch's gradcheck does (which uses eps 1e-6, atol 1e-5,
// rtol 1e-3; we check tighter by default).
//
// For a function y = f(x₁..xₙ) and a random upstream gradient g, the scalar
// L = Σ g·y has ∂L/∂xᵢ = the backward pass's gradient for xᵢ, and its
// numeric estimate is (L(xᵢ+eps) − L(xᵢ−eps)) / 2eps, element by element.
package gradcheck

import (
	"fmt"
	"math"
	"testing"

	"github.com/plumbml/plumb/tensor"
)

// Tolerance bounds |analytic − numeric| <= Atol + Rtol·|numeric|.
type Tolerance struct{ Eps, Atol, Rtol float64 }

// Default is tighter than PyTorch's gradcheck in atol and rtol.
var Default = Tolerance{Eps: 1e-6, Atol: 1e-6, Rtol: 1e-4}

// Forward computes the output from the inputs; Backward returns each input's
// gradient for upstream gradient gout (nil where not computed).
type (
	Forward  func(in []*tensor.Tensor) (*tensor.Tensor, error)
	Backward func(in []*tensor.Tensor, out, gout *tensor.Tensor) ([]*tensor.Tensor, error)
)

// Op is the part of ops.Op the checker uses, declared here so that the ops
// package's own tests can import gradcheck without an import cycle.
type Op interface {
	Forward(in []*tensor.Tensor) (*tensor.Tensor, error)
	Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error)
}

// Op checks a fresh op from mk (one per evaluation, since ops keep forward
// state) for the float64 inputs in, for each input index in wrt.
func CheckOp[O Op](t testing.TB, mk func() O, in []*tensor.Tensor, wrt ...int) {
	t.Helper()
	fwd := func(in []*tensor.Tensor) (*tensor.Tensor, error) { return mk().Forward(in) }
	bwd := func(in []*tensor.Tensor, _, gout *tensor.Tensor) ([]*tensor.Tensor, error) {
		op := mk()
		out, err := op.Forward(in)
		if err != nil {
			return nil, err
		}
		need := make([]bool, len(in))
		for _, i := range wrt {
			need[i] = true
		}
		return op.Backward(in, out, gout, need)
	}
	if err := Check(fwd, bwd, in, wrt, Default); err != nil {
		t.Error(err)
	}
}

// Check returns an error describing the worst mismatch, or nil when every
// gradient element is within tol. Inputs must be float64; they are
// perturbed in place and restored.
func Check(fwd Forward, bwd Backward, in []*tensor.Tensor, wrt []int, tol Tolerance) error {
	out, err := fwd(in)
	if err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	rng := tensor.NewRNG(12345)
	gout, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, out.Shape()...)
	if err != nil {
		return err
	}
	grads, err := bwd(in, out, gout)
	if err != nil {
		return fmt.Errorf("backward: %w", err)
	}
	loss := func() (float64, error) {
		y, err := fwd(in)
		if err != nil {
			return 0, err
		}
		s := 0.0
		for i, v := range y.Float64s() {
			s += v * gout.Float64s()[i]
		}
		return s, nil
	}
	for _, i := range wrt {
		if i >= len(grads) || grads[i] == nil {
			return fmt.Errorf("input %d: backward returned no gradient", i)
		}
		if !grads[i].Shape().Equal(in[i].Shape()) {
			return fmt.Errorf("input %d: gradient shape %v, want %v", i, grads[i].Shape(), in[i].Shape())
		}
		x := in[i].Float64s()
		an := grads[i].Float64s()
		for j := range x {
			orig := x[j]
			x[j] = orig + tol.Eps
			lp, err := loss()
			if err != nil {
				return err
			}
			x[j] = orig - tol.Eps
			lm, err := loss()
			x[j] = orig
			if err != nil {
				return err
			}
			num := (lp - lm) / (2 * tol.Eps)
			if d := math.Abs(an[j] - num); !(d <= tol.Atol+tol.Rtol*math.Abs(num)) {
				return fmt.Errorf("input %d (shape %v) element %d: analytic %.10g, numeric %.10g, |diff| %.3g > %.3g",
					i, in[i].Shape(), j, an[j], num, d, tol.Atol+tol.Rtol*math.Abs(num))
			}
		}
	}
	return nil
}
