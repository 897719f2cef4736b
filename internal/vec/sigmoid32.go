package vec

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// Sigmoid32 is the logistic function 1/(1+exp(-x)) in float32, through
// Exp32 (Cephes' expf): exp(-x) carries about one ulp of error and the
// sum and division one rounding each, so the result is within about two
// float32 ulps of the exact value, the rounding TF's float32 kernels
// (Eigen's logistic) carry as well. Large |x| saturate to 0 and 1 without
// overflow since Exp32 clamps its argument.
func Sigmoid32(x float32) float32 {
	return 1 / (1 + Exp32(-x))
}

// sigmoid32 writes y = sigmoid(x) elementwise, eight lanes at a time with
// AVX2 where the CPU has it (sigmoid32_amd64.s) and Sigmoid32 for the
// rest. NaN stays NaN.
func sigmoid32(y, x []float32) {
	x = x[:len(y)]
	n := sigmoidVec(y, x)
	for i := n; i < len(y); i++ {
		y[i] = Sigmoid32(x[i])
	}
}

// Sigmoid writes y = 1/(1+exp(-x)) elementwise for the first len(y)
// elements of x: float32 through sigmoid32 (the vector kernel), float64
// through math.Exp in the form that cannot overflow.
func Sigmoid[T tensor.Float](y, x []T) {
	if x32, ok := any(x).([]float32); ok {
		sigmoid32(any(y).([]float32), x32)
		return
	}
	for i, v := range x[:len(y)] {
		y[i] = T(Sigmoid64(float64(v)))
	}
}

// Sigmoid64 is the logistic function in float64, exp taken of -|x| so
// that it never overflows.
func Sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}
