package initializer

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/plumbml/plumb/tensor"
)

// Orthogonal returns a [rows, cols] matrix with orthonormal rows (rows <=
// cols) or columns, Keras' Orthogonal initializer with gain 1 (the
// recurrent kernels' default): the Q of a standard normal matrix's QR
// decomposition with R's diagonal made positive (Saxe et al. 2014). Q is
// computed by modified Gram-Schmidt in float64, whose R has a positive
// diagonal by construction; a column that comes out (numerically)
// dependent is redrawn. shape must have two dims.
func Orthogonal(rng *rand.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	switch {
	case rng == nil:
		return nil, fmt.Errorf("initializer: Orthogonal of shape %v with a nil *rand.Rand (use tensor.NewRNG)", shape)
	case len(shape) != 2 || shape[0] < 0 || shape[1] < 0:
		return nil, fmt.Errorf("initializer: Orthogonal of shape %v: want a matrix [rows, cols]", shape)
	case !dt.IsFloat():
		return nil, fmt.Errorf("initializer: Orthogonal wants a float dtype, got %v", dt)
	}
	rows, cols := shape[0], shape[1]
	n, m := max(rows, cols), min(rows, cols)
	q := make([][]float64, m) // m orthonormal vectors of length n
	for j := 0; j < m; j++ {
		for {
			v := make([]float64, n)
			for i := range v {
				v[i] = rng.NormFloat64()
			}
			for _, p := range q[:j] {
				dot := 0.0
				for i := range v {
					dot += v[i] * p[i]
				}
				for i := range v {
					v[i] -= dot * p[i]
				}
			}
			norm := 0.0
			for _, x := range v {
				norm += x * x
			}
			if norm = math.Sqrt(norm); norm > 1e-6 {
				for i := range v {
					v[i] /= norm
				}
				q[j] = v
				break
			}
		}
	}
	out := tensor.Zeros(tensor.Float64, rows, cols)
	for j, v := range q {
		for i, x := range v {
			if rows >= cols { // Q [n, m]: column j
				out.SetAt(i*cols+j, x)
			} else { // Qᵀ [m, n]: row j
				out.SetAt(j*cols+i, x)
			}
		}
	}
	return out.Cast(dt)
}
