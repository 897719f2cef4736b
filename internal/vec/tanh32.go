package vec

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// Tanh32 is the hyperbolic tangent in float32 by Cephes' tanhf
// (S. L. Moshier): for |x| < 0.625 the odd polynomial
//
//	x + x·z·(((((q0·z + q1)·z + q2)·z + q3)·z + q4)    z = x²
//
// and above it 1 - 2/(exp(2|x|) + 1) with the sign of x, through Exp32.
// Both are within a few float32 ulps of the exact value, the rounding
// TF's float32 tanh (Eigen's rational approximation) carries as well;
// large |x| give exactly ±1.
func Tanh32(x float32) float32 {
	a := math.Abs(float64(x))
	var r float32
	switch {
	case a < tanhSmall:
		z := float32(a * a)
		p := fma32(tanhQ0, z, tanhQ1)
		p = fma32(p, z, tanhQ2)
		p = fma32(p, z, tanhQ3)
		p = fma32(p, z, tanhQ4)
		r = fma32(p*z, float32(a), float32(a))
	case a != a: // NaN
		return x
	default:
		r = 1 - 2/(Exp32(float32(a+a))+1)
	}
	return float32(math.Copysign(float64(r), float64(x)))
}

// Cephes tanhf's switch point and polynomial.
const (
	tanhSmall = 0.625
	tanhQ0    = -5.70498872745e-3
	tanhQ1    = 2.06390887954e-2
	tanhQ2    = -5.37397155531e-2
	tanhQ3    = 1.33314422036e-1
	tanhQ4    = -3.33332819422e-1
)

// tanh32 writes y = tanh(x) elementwise, eight lanes at a time with AVX2
// where the CPU has it (tanh32_amd64.s) and Tanh32 for the rest. NaN
// stays NaN.
func tanh32(y, x []float32) {
	x = x[:len(y)]
	n := tanhVec(y, x)
	for i := n; i < len(y); i++ {
		y[i] = Tanh32(x[i])
	}
}

// Tanh writes y = tanh(x) elementwise for the first len(y) elements of x:
// float32 through tanh32 (the vector kernel), float64 through math.Tanh.
func Tanh[T tensor.Float](y, x []T) {
	if x32, ok := any(x).([]float32); ok {
		tanh32(any(y).([]float32), x32)
		return
	}
	for i, v := range x[:len(y)] {
		y[i] = T(math.Tanh(float64(v)))
	}
}
