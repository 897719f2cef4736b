package infer

import (
	"fmt"
	"math"
)

// dynRange returns the smallest and largest elements of x (at most 0
// and at least 0) and whether every element is finite, the AVX2 loop
// (dynRangeFast) taking what it can: an infinity ends
// up as lo or hi, and a NaN, which fails every comparison, is caught by
// v != v.
func dynRange(x []float32) (lo, hi float32, finite bool) {
	done, lo, hi, nan := dynRangeFast(x)
	for _, v := range x[done:] {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
		if v != v {
			nan = true
		}
	}
	inf := float32(math.Inf(1))
	return lo, hi, !nan && lo != -inf && hi != inf
}

// dynScale returns ONNX DynamicQuantizeLinear's scale and zero point for
// the range [lo, hi] (lo ≤ 0 ≤ hi): scale = (hi − lo)/255 (1 for an
// all-zero input) and zero = saturate(round(−lo/scale)), as
// qgemm.DynamicQuantizeLinear computes them.
func dynScale(lo, hi float32) (scale float32, zero uint8) {
	scale = (hi - lo) / 255
	if scale == 0 {
		scale = 1
	}
	return scale, uint8(min(max(math.RoundToEven(float64(-lo/scale)), 0), 255))
}

// roundMagic is 1.5·2²³: adding and subtracting it rounds a float32 of
// magnitude below 2²² to an integer, half to even, in the FPU's default
// rounding mode.
const roundMagic = 12582912

// dynQuantize writes saturate(round(v/scale) + zero) for each v of x into
// q, rounding half to even: ONNX DynamicQuantizeLinear's quantization,
// element for element qgemm.DynamicQuantizeLinear's, with the rounding
// done in float32 (|v/scale| is at most 255 here, within roundMagic's
// exact range) instead of through float64 and math.RoundToEven, the cost
// that dominated the quantization; the AVX2 loop (dynQuantizeFast: the
// same division, VROUNDPS to nearest even, the same clamps) takes what it
// can.
func dynQuantize(x []float32, scale float32, zero uint8, q []uint8) {
	done := dynQuantizeFast(x, scale, zero, q)
	x, q = x[done:], q[done:len(x)]
	z := float32(zero)
	for i, v := range x {
		r := (v/scale + roundMagic) - roundMagic + z
		if r < 0 {
			r = 0
		}
		if r > 255 {
			r = 255
		}
		q[i] = uint8(r)
	}
}

// dynQuantizeRows quantizes the concatenation [a, b] of m rows (a's of
// width ka, b's of kb; b may be empty) per tensor into q (m·(ka+kb)
// bytes, rows contiguous), with one range over both, and returns the
// scale and zero point. It returns an error, naming the element, for a
// NaN or infinite input.
func dynQuantizeRows(m, ka, kb int, a, b []float32, q []uint8) (float32, uint8, error) {
	lo, hi, fa := dynRange(a)
	lb, hb, fb := dynRange(b)
	if !fa || !fb {
		for i, v := range a {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return 0, 0, fmt.Errorf("input element %d is %v, want a finite number", i, v)
			}
		}
		for i, v := range b {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return 0, 0, fmt.Errorf("second input's element %d is %v, want a finite number", i, v)
			}
		}
	}
	scale, zero := dynScale(min(lo, lb), max(hi, hb))
	if kb == 0 {
		dynQuantize(a[:m*ka], scale, zero, q)
		return scale, zero, nil
	}
	k := ka + kb
	for i := range m {
		dynQuantize(a[i*ka:(i+1)*ka], scale, zero, q[i*k:])
		dynQuantize(b[i*kb:(i+1)*kb], scale, zero, q[i*k+ka:])
	}
	return scale, zero, nil
}
