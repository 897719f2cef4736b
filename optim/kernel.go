package optim

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// kernel is one rule's update on validated slices: parameter v, gradient g
// and slots s, all of one length, with the step's coefficients c.
type kernel[C any, T tensor.Float] func(c C, v, g []T, s [][]T)

// run calls the kernel instance for v's dtype (float32 or float64, which
// newOptimizer and check have guaranteed, as they have the shapes).
func run[C any](c C, v, g *tensor.Tensor, s []*tensor.Tensor, k32 kernel[C, float32], k64 kernel[C, float64]) {
	if v.DType() == tensor.Float32 {
		k32(c, v.Float32s(), g.Float32s(), slotData[float32](s))
		return
	}
	k64(c, v.Float64s(), g.Float64s(), slotData[float64](s))
}

func slotData[T tensor.Float](s []*tensor.Tensor) [][]T {
	d := make([][]T, len(s))
	for i, t := range s {
		d[i] = tensor.Data[T](t)
	}
	return d
}

// sqrt is math.Sqrt in T; for float32 the float64 root rounds to the
// correctly rounded float32 root.
func sqrt[T tensor.Float](x T) T { return T(math.Sqrt(float64(x))) }

// axpy sets y += a*x for float tensors of one dtype and size.
func axpy(a float64, x, y *tensor.Tensor) {
	if y.DType() == tensor.Float32 {
		axpyT(float32(a), x.Float32s(), y.Float32s())
		return
	}
	axpyT(a, x.Float64s(), y.Float64s())
}

func axpyT[T tensor.Float](a T, x, y []T) {
	for i, xi := range x {
		y[i] += a * xi
	}
}

// scale sets t *= a for a float tensor.
func scale(a float64, t *tensor.Tensor) {
	if t.DType() == tensor.Float32 {
		scaleT(float32(a), t.Float32s())
		return
	}
	scaleT(a, t.Float64s())
}

func scaleT[T tensor.Float](a T, x []T) {
	for i := range x {
		x[i] *= a
	}
}
