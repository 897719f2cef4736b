package vec

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// The float32 exponential of the softmax-type kernels, Cephes' expf (S. L. Moshier, Cephes Math Library): x = n·ln 2 + r with
// n = round(x·log2 e) and |r| <= ln 2/2, ln 2 split in two parts (c1 is
// exact in float32, so n·c1 is exact), then
//
//	exp(r) ≈ 1 + r + r²·(p5 + r·(p4 + r·(p3 + r·(p2 + r·(p1 + r·p0)))))
//
// and exp(x) = exp(r)·2^n built in the exponent bits. The polynomial is
// taken in Estrin's order, ((p0·r + p1)·r² + (p2·r + p3))·r² + (p4·r +
// p5), a dependency chain three fused multiply-adds deep instead of
// Horner's five: the vector kernels wait on that chain (each step waits
// for the one before) more than on their arithmetic. Its error is about
// one float32 ulp, the rounding that the float32 result of math.Exp
// carries anyway, at a fraction of math.Exp's cost, and the AVX2 kernel
// (exp32_amd64.s) does eight at a time. The kernels call it on x - max or
// x - logsumexp, never above 0; arguments above ln 2^127 are clamped, so
// it never overflows. Below ln 2^-126 the result is 0
// (subnormal values are dropped, as Eigen's and TF's float32 exp do), which
// also sends a masked score of -Inf to exactly 0.
const (
	expLo    = -87.33654475      // ln 2^-126
	expHi    = 88.02969193111305 // ln 2^127, where larger arguments are clamped
	expLog2e = 1.44269504088896341
	expC1    = 0.693359375
	expC2    = -2.12194440e-4
	expP0    = 1.9875691500e-4
	expP1    = 1.3981999507e-3
	expP2    = 8.3334519073e-3
	expP3    = 4.1665795894e-2
	expP4    = 1.6666665459e-1
	expP5    = 5.0000001201e-1
)

// Exp32 is exp(x) in float32 by the method above, one element at a time.
func Exp32(x float32) float32 { return expSplit32(x, 0) }

// fma32 is a·b + c in float32 with the product kept exact, as the FMA
// instructions of the vector kernel (a float32 product is exact in
// float64; the sum is rounded to float64 and then to float32, which only
// rarely differs from one rounding).
func fma32(a, b, c float32) float32 { return float32(float64(a)*float64(b) + float64(c)) }

// expShift32 writes exp(src - m) to dst (which may be src; nil: only the
// sum is wanted) and returns their sum, taken in float64: the exp-and-sum
// pass of a softmax row whose maximum is m.
func expShift32(dst, src []float32, m float32) float64 {
	n, s := expShiftVec(dst, src, m)
	for i := n; i < len(src); i++ {
		e := Exp32(src[i] - m)
		if dst != nil {
			dst[i] = e
		}
		s += float64(e)
	}
	return s
}

// ExpShiftScale32 writes exp(src - m)·scale, rounded to float32, to dst
// (which may be src): a row of probabilities exp(s - lse) whose float32
// shift m leaves a correction factor, in one pass, eight lanes at a time
// with AVX2 and FMA where the CPU has them.
func ExpShiftScale32(dst, src []float32, m, scale float32) {
	for i := expScaleVec(dst, src, m, scale); i < len(src); i++ {
		dst[i] = Exp32(src[i]-m) * scale
	}
}

// ExpShiftSum writes exp(src - m) to dst, 0 where src is -Inf, and
// returns their sum in float64: the exp-and-sum pass of a softmax row. m
// is exactly a T (a maximum of src, or 0). dst has src's length, may be
// src, or is nil when only the sum is wanted (so a softmax needs no copy
// of its row). float32 rows go through the vector exponential (Exp32's
// method, eight lanes at a time with AVX2 and FMA); float64 rows through
// math.Exp.
func ExpShiftSum[T tensor.Float](dst, src []T, m float64) float64 {
	if s32, ok := any(src).([]float32); ok {
		d32, _ := any(dst).([]float32)
		return expShift32(d32, s32, float32(m))
	}
	sum := 0.0
	for c, v := range src {
		e := math.Exp(float64(v) - m)
		if dst != nil {
			dst[c] = T(e)
		}
		sum += e
	}
	return sum
}

// Scale multiplies every element of x by a, rounded to T first.
func Scale[T tensor.Float](x []T, a float64) {
	t := T(a)
	for i := range x {
		x[i] *= t
	}
}
