package ops

import "github.com/plumbml/plumb/tensor"

// sigmoidf32 is the logistic function 1/(1+exp(-x)) in float32, through
// expf32 (Cephes' expf): exp(-x) carries about one ulp of error and the
// sum and division one rounding each, so the result is within about two
// float32 ulps of the exact value, the rounding TF's float32 kernels
// (Eigen's logistic) carry as well. Large |x| saturate to 0 and 1 without
// overflow since expf32 clamps its argument.
func sigmoidf32(x float32) float32 {
	return 1 / (1 + expf32(-x))
}

// sigmoid32 writes y = sigmoid(x) elementwise, eight lanes at a time with
// AVX2 where the CPU has it (sigmoid32_amd64.s) and sigmoidf32 for the
// rest. NaN stays NaN.
func sigmoid32(y, x []float32) {
	x = x[:len(y)]
	n := sigmoidVec(y, x)
	for i := n; i < len(y); i++ {
		y[i] = sigmoidf32(x[i])
	}
}

// sigmoidInto writes y = sigmoid(x), through sigmoid32 for float32.
func sigmoidInto[T tensor.Float](y, x []T) {
	if x32, ok := any(x).([]float32); ok {
		sigmoid32(any(y).([]float32), x32)
		return
	}
	for i, v := range x[:len(y)] {
		y[i] = T(sigmoid(float64(v)))
	}
}
