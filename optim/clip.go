package optim

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// ClipGlobalNorm scales the gradients of params (those with a non-nil
// Grad or SparseGrad) so that their global norm, sqrt(sum over all
// elements of g²), is at most maxNorm, and returns the norm before
// clipping. It follows tf.clip_by_global_norm: every gradient is multiplied
// by maxNorm/max(norm, maxNorm), so the gradients keep their direction, and
// if the norm is infinite or NaN every gradient becomes NaN (a sparse one
// is made dense for that, as every element of the dense gradient would
// be), making the fault visible rather than training on. The norm is summed
// in float64; a sparse gradient's rows are unique, so its norm is that of
// its dense form. maxNorm must be finite and > 0, and gradients must be
// float32 or float64.
func ClipGlobalNorm(params []*graph.Param, maxNorm float64) (float64, error) {
	if err := positive("ClipGlobalNorm", maxNorm); err != nil {
		return 0, fmt.Errorf("optim: %w", err)
	}
	var withGrad []*graph.Param
	for i, p := range params {
		if p == nil {
			return 0, fmt.Errorf("optim: ClipGlobalNorm: parameter %d is nil", i)
		}
		switch {
		case p.SparseGrad != nil && p.Grad != nil:
			return 0, fmt.Errorf("optim: ClipGlobalNorm: parameter %q has both a dense and a sparse gradient", p.Name)
		case p.SparseGrad != nil:
			if err := p.SparseGrad.Validate(p.Value); err != nil {
				return 0, fmt.Errorf("optim: ClipGlobalNorm: parameter %q: %w", p.Name, err)
			}
			if !p.Value.DType().IsFloat() {
				return 0, fmt.Errorf("optim: ClipGlobalNorm: gradient of %q is %v, want float32 or float64", p.Name, p.Value.DType())
			}
		case p.Grad == nil:
			continue
		case !p.Grad.DType().IsFloat():
			return 0, fmt.Errorf("optim: ClipGlobalNorm: gradient of %q is %v, want float32 or float64", p.Name, p.Grad.DType())
		}
		withGrad = append(withGrad, p)
	}
	return clipGlobalNorm(withGrad, maxNorm), nil
}

// clipGlobalNorm is ClipGlobalNorm on parameters with validated float
// gradients, dense or sparse.
func clipGlobalNorm(params []*graph.Param, maxNorm float64) float64 {
	grads := make([]*tensor.Tensor, len(params))
	var sum float64
	for i, p := range params {
		grads[i] = p.Grad
		if p.SparseGrad != nil {
			grads[i] = p.SparseGrad.Values
		}
		if grads[i].DType() == tensor.Float32 {
			sum += sumSquares(grads[i].Float32s())
		} else {
			sum += sumSquares(grads[i].Float64s())
		}
	}
	norm := math.Sqrt(sum)
	switch {
	case math.IsNaN(norm) || math.IsInf(norm, 0):
		for _, p := range params {
			densify(p)
			p.Grad.Fill(math.NaN())
		}
	case norm > maxNorm:
		for _, g := range grads {
			scale(maxNorm/norm, g)
		}
	}
	return norm
}

// sumSquares is Σ x² in float64, through the vector loop (vec.SumSqDevF64
// about 0).
func sumSquares[T tensor.Float](x []T) float64 { return vec.SumSqDevF64(x, 0) }
