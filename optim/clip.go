package optim

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// ClipGlobalNorm scales the gradients of params (those with a non-nil
// Grad) so that their global norm, sqrt(sum over all elements of g²), is at
// most maxNorm, and returns the norm before clipping. It follows
// tf.clip_by_global_norm: every gradient is multiplied by
// maxNorm/max(norm, maxNorm), so the gradients keep their direction, and if
// the norm is infinite or NaN every gradient becomes NaN, making the fault
// visible rather than training on. The norm is summed in float64.
// maxNorm must be finite and > 0, and gradients must be float32 or float64.
func ClipGlobalNorm(params []*graph.Param, maxNorm float64) (float64, error) {
	if err := positive("ClipGlobalNorm", maxNorm); err != nil {
		return 0, fmt.Errorf("optim: %w", err)
	}
	var grads []*tensor.Tensor
	for i, p := range params {
		if p == nil {
			return 0, fmt.Errorf("optim: ClipGlobalNorm: parameter %d is nil", i)
		}
		if p.Grad == nil {
			continue
		}
		if !p.Grad.DType().IsFloat() {
			return 0, fmt.Errorf("optim: ClipGlobalNorm: gradient of %q is %v, want float32 or float64", p.Name, p.Grad.DType())
		}
		grads = append(grads, p.Grad)
	}
	return clipGlobalNorm(grads, maxNorm), nil
}

// clipGlobalNorm is ClipGlobalNorm on validated float gradients.
func clipGlobalNorm(grads []*tensor.Tensor, maxNorm float64) float64 {
	var sum float64
	for _, g := range grads {
		if g.DType() == tensor.Float32 {
			sum += sumSquares(g.Float32s())
		} else {
			sum += sumSquares(g.Float64s())
		}
	}
	norm := math.Sqrt(sum)
	switch {
	case math.IsNaN(norm) || math.IsInf(norm, 0):
		for _, g := range grads {
			g.Fill(math.NaN())
		}
	case norm > maxNorm:
		for _, g := range grads {
			scale(maxNorm/norm, g)
		}
	}
	return norm
}

func sumSquares[T tensor.Float](x []T) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}
