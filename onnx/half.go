package onnx

import (
	"math"
	"math/bits"
)

// The 16-bit float storage types of ONNX (TensorProto.FLOAT16 and
// BFLOAT16). Plumb has no 16-bit dtype: the reader widens them to float32
// (exactly: every FLOAT16 and BFLOAT16 value is a float32 value) and the
// importer computes in float32; Cast to either type rounds a value to the
// nearest one the type holds and keeps it in float32.
//
// FLOAT16 is IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10
// fraction bits, with subnormals, infinities and NaN. BFLOAT16 is the top
// half of a binary32: 1 sign bit, 8 exponent bits (bias 127), 7 fraction
// bits. Narrowing follows ONNX Cast (onnx/docs/Operators.md, Cast, opset
// 19 and 21): round to nearest, ties to even; a finite value too large
// for the type becomes an infinity of its sign (the saturate attribute
// applies to the float8 types only); NaN stays NaN (quiet, payload bits
// kept where they fit).

// Float16ToFloat32 returns the float32 value of the binary16 bit pattern h.
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // infinity or NaN: the fraction moves to the top of binary32's
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp != 0: // normal: rebias the exponent
		return math.Float32frombits(sign | (exp-15+127)<<23 | frac<<13)
	}
	// zero or subnormal: frac × 2^-24, exact in float32.
	v := float32(frac) * (1.0 / (1 << 24))
	return math.Float32frombits(sign | math.Float32bits(v))
}

// BFloat16ToFloat32 returns the float32 value of the bfloat16 bit pattern
// h: the top 16 bits of that float32.
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float16Bits returns the binary16 bit pattern nearest x (ties to even;
// beyond the largest finite value, 65504, an infinity). A float64 is
// rounded once, not through float32, so no value is rounded twice.
func Float16Bits(x float64) uint16 { return narrow(x, 10, 15, 0x1f) }

// BFloat16Bits returns the bfloat16 bit pattern nearest x (ties to even;
// beyond the largest finite value, about 3.39e38, an infinity).
func BFloat16Bits(x float64) uint16 { return narrow(x, 7, 127, 0xff) }

// narrow rounds x to the binary format of fracBits fraction bits, the
// exponent bias and the all-ones exponent field maxExp, and returns its bits
// (the sign at bit 15, then the exponent field, then the fraction).
func narrow(x float64, fracBits uint, bias, maxExp int) uint16 {
	b := math.Float64bits(x)
	sign := uint16(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	frac := b & (1<<52 - 1)
	switch {
	case exp == 0x7ff && frac != 0: // NaN: quiet, with the top payload bits
		return sign | uint16(maxExp)<<fracBits | 1<<(fracBits-1) | uint16(frac>>(52-fracBits))
	case exp == 0x7ff:
		return sign | uint16(maxExp)<<fracBits
	case exp == 0: // zero or a float64 subnormal, far below either type's least subnormal
		return sign
	}
	sig := frac | 1<<52 // the significand, 53 bits, value sig × 2^(e-52)
	e := exp - 1023
	shift := 52 - int(fracBits) // bits dropped for a normal result
	if minE := 1 - bias; e < minE {
		shift += minE - e // a subnormal result keeps fewer bits
	}
	if shift > 54 { // below half the least subnormal: rounds to zero
		return sign
	}
	q := sig >> uint(shift)
	rem := sig & (1<<uint(shift) - 1)
	half := uint64(1) << uint(shift-1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	if e < 1-bias {
		// Subnormal: q < 2^fracBits, or exactly 2^fracBits when it rounded up
		// to the least normal, whose bits are the same number.
		return sign | uint16(q)
	}
	if q == 1<<(fracBits+1) { // rounded up to the next power of two
		q >>= 1
		e++
	}
	field := e + bias
	if field >= maxExp {
		return sign | uint16(maxExp)<<fracBits
	}
	return sign | uint16(field)<<fracBits | uint16(q&(1<<fracBits-1))
}

// ExactFloat64 returns an int64 as a float64 that rounds to every binary
// format of at most 51 significant bits as v itself would: v when it is
// exact in float64, else v rounded to odd at 53 bits (the low bit set when
// any dropped bit was), which makes a second rounding to fewer bits
// correct (Boldo and Melquiond, "When double rounding is odd", 2005).
func ExactFloat64(v int64) float64 {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	if s := bits.Len64(u) - 53; s > 0 {
		t := u >> uint(s)
		if u&(1<<uint(s)-1) != 0 {
			t |= 1
		}
		f := math.Ldexp(float64(t), s)
		if neg {
			return -f
		}
		return f
	}
	if neg {
		return -float64(u)
	}
	return float64(u)
}
