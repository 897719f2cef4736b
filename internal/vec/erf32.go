package vec

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

// The float32 error function and exact GELU, x·Φ(x) = x·erfc(-x/√2)/2
// (Hendrycks & Gimpel 2016; tf.nn.gelu approximate=False, PyTorch's
// GELU(approximate='none')), evaluated in float32 so that eight lanes run
// at once with AVX2 (erf32_amd64.s), instead of through float64 math.Erf
// one element at a time.
//
// Both rest on the complementary error function for z = |x| in the
// factored form
//
//	erfc(z) = exp(-z²)·erfcx(z),   erfcx(z) ≈ t·(c0 + c1·t + … + c9·t⁹),   t = 1/(1 + 0.4·z),
//
// where erfcx, the scaled complementary error function, is smooth and
// slowly varying on [0, ∞): t maps it to (0, 1], where it is 1 at t = 1
// and tends to t/(0.8·√π) as t → 0. The coefficients are a minimax fit of
// relative error made for Plumb (bench/erf_fit.py: Lawson's iteratively
// reweighted least squares in numpy over z in [0, 9.5], each coefficient
// rounded to float32 in turn and the higher ones refitted), within 7.5e-9
// of erfcx relative to its value, well under float32's 6e-8 rounding; the
// substitution t = 1/(1 + p·z) is the one of Abramowitz & Stegun 7.1.26
// and Numerical Recipes' erfcc, here with a fit of our own.
//
// exp(-z²) must be as accurate relative to its value as the rest, or the
// far tail of GELU (x ≤ -3, where x·Φ(x) is tiny) would lose digits:
// z² is taken exactly as p + e with p = fl(z·z) and e = fma(z, z, -p),
// exp's range reduction is done on -p, and -e is added to the reduced
// argument (expSplit32). erfc(z) is therefore used directly for GELU's
// negative side (Φ(x) = erfc(|x|/√2)/2, never 1 - something) and as
// 1 - erfc(z) only where that is at least 1/2. Near 0, erf itself is the
// odd polynomial
//
//	erf(z) ≈ z + z·(s0 + s1·z² + … + s4·z⁸)    |z| < 1/2,
//
// the same kind of fit, with 2/√π - 1 as s0 so that the leading term is
// exact; it holds erf(z)/z to 1.5e-9.
//
// All told Gelu32 and Erf32 stay within 6 float32 ulps (a relative error
// of 7.2e-7) of the exact value for every result above 2^-122
// (TestErf32Accuracy sweeps the range against math.Erf and math.Erfc in
// float64 and holds that bound); GELU below x = -12.9 rounds through
// subnormal intermediates.
// Results below 2^-126 are flushed to 0 with the exponential, as Exp32
// does. NaN stays NaN; gelu(-Inf) is NaN as -Inf·0 in the float64 form.
const (
	erfcT    = 0.4                 // t = 1/(1 + erfcT·z)
	geluT    = 0.28284271247461906 // erfcT/√2: z = |x|/√2 for GELU
	erfcC0   = 2.257106602e-01
	erfcC1   = 2.248799652e-01
	erfcC2   = 2.155114710e-01
	erfcC3   = 1.269415766e-01
	erfcC4   = 2.799192965e-01
	erfcC5   = -2.988866866e-01
	erfcC6   = 5.647764802e-01
	erfcC7   = -5.117372870e-01
	erfcC8   = 2.034808397e-01
	erfcC9   = -3.059630841e-02
	erfS0    = 1.283791661e-01
	erfS1    = -3.761261106e-01
	erfS2    = 1.128285080e-01
	erfS3    = -2.675825916e-02
	erfS4    = 4.719160032e-03
	erfHalf  = 0.5 // below it erf is the odd polynomial
	invSqrt2 = 0.70710678118654752
)

// erf32Consts are the vector kernels' constants (erf32_amd64.s), read by
// byte offset and broadcast as used: erfcx's c9..c0 (0-36), erf's s4..s0
// (40-56), 1 (60), 1/2 (64), -1/2 (68), -1 (72), the t factors for erf and
// GELU (76, 80), the absolute-value mask (84), ln 2^-126 (88) and 1/√2
// (92).
var erf32Consts = [24]float32{
	erfcC9, erfcC8, erfcC7, erfcC6, erfcC5, erfcC4, erfcC3, erfcC2, erfcC1, erfcC0,
	erfS4, erfS3, erfS2, erfS1, erfS0,
	1, 0.5, -0.5, -1,
	erfcT, geluT,
	math.Float32frombits(0x7fffffff), expLo, invSqrt2,
}

// expSplit32 is exp(hi + lo) in float32 by Exp32's method for |lo| much
// smaller than |hi|, which never rounds hi + lo: the range reduction is
// done on hi, whose n·ln 2 part cancels exactly, and lo is added to the
// reduced argument. It is 0 below ln 2^-126.
func expSplit32(hi, lo float32) float32 {
	if !(hi >= expLo) {
		if hi != hi {
			return hi
		}
		return 0
	}
	hi = min(hi, expHi)
	n := float32(math.RoundToEven(float64(hi * expLog2e)))
	r := fma32(-n, expC1, hi)
	r = fma32(-n, expC2, r) + lo
	r2 := r * r
	a := fma32(expP0, r, expP1)
	b := fma32(expP2, r, expP3)
	c := fma32(expP4, r, expP5)
	p := fma32(fma32(a, r2, b), r2, c)
	y := fma32(p, r2, r) + 1
	return y * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// erfcScaled32 is erfc(m·|x|) for m = 1 (k = erfcT, s = -1) or m = 1/√2
// (k = geluT, s = -1/2), with t = 1/(1 + k·|x|) and exp(s·x²), x² split
// exactly into p + e.
func erfcScaled32(x, k, s float32) float32 {
	t := 1 / fma32(k, float32(math.Abs(float64(x))), 1)
	q := float32(erfcC9)
	for _, c := range [...]float32{erfcC8, erfcC7, erfcC6, erfcC5, erfcC4, erfcC3, erfcC2, erfcC1, erfcC0} {
		q = fma32(q, t, c)
	}
	p := x * x
	e := float32(float64(x)*float64(x) - float64(p)) // exact: fma(x, x, -p)
	return q * t * expSplit32(s*p, s*e)
}

// Erf32 is the Gauss error function in float32 (the method above).
func Erf32(x float32) float32 {
	if math.Abs(float64(x)) < erfHalf {
		return erfSmall32(x)
	}
	r := 1 - erfcScaled32(x, erfcT, -1)
	return float32(math.Copysign(float64(r), float64(x)))
}

// erfSmall32 is erf's odd polynomial, for |x| < 1/2.
func erfSmall32(x float32) float32 {
	s := x * x
	r := fma32(fma32(fma32(fma32(erfS4, s, erfS3), s, erfS2), s, erfS1), s, erfS0)
	return fma32(x, r, x)
}

// Gelu32 is the exact GELU x·Φ(x) in float32 (the method above): with z =
// x/√2, Φ(x) is (1 + erf(z))/2 for |z| < 1/2, where erf is the
// polynomial, and otherwise, with h = erfc(|z|)/2, h for x < 0 and 1 - h
// above.
func Gelu32(x float32) float32 {
	if z := x * invSqrt2; math.Abs(float64(z)) < erfHalf {
		return x * fma32(0.5, erfSmall32(z), 0.5)
	}
	h := 0.5 * erfcScaled32(x, geluT, -0.5)
	if x > 0 {
		h = 1 - h
	}
	return x * h
}

// Erf writes y = erf(x) elementwise for the first len(y) elements of x:
// float32 eight lanes at a time with AVX2 where the CPU has it and Erf32
// for the rest, float64 through math.Erf.
func Erf[T tensor.Float](y, x []T) { apply(y, x, erfVec, Erf32, math.Erf) }

// Gelu writes y = x·Φ(x), the exact GELU, elementwise for the first
// len(y) elements of x: float32 eight lanes at a time with AVX2 where the
// CPU has it and Gelu32 for the rest, float64 as 0.5·x·(1 + erf(x/√2))
// through math.Erf.
func Gelu[T tensor.Float](y, x []T) { apply(y, x, geluVec, Gelu32, gelu64) }

func gelu64(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// apply writes y = f(x) for the first len(y) elements of x: float32 by
// the vector kernel on a prefix (v returns how far it went) and f32 for
// the rest, float64 by f64.
func apply[T tensor.Float](y, x []T, v func(y, x []float32) int, f32 func(float32) float32, f64 func(float64) float64) {
	if x32, ok := any(x).([]float32); ok {
		y32 := any(y).([]float32)
		x32 = x32[:len(y32)]
		for i := v(y32, x32); i < len(y32); i++ {
			y32[i] = f32(x32[i])
		}
		return
	}
	for i, e := range x[:len(y)] {
		y[i] = T(f64(float64(e)))
	}
}
