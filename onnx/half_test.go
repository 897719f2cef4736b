package onnx

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/tensor"
)

// Bit patterns checked by hand against IEEE 754 binary16 and bfloat16:
// the value's exponent and fraction written out, ties resolved to the
// even fraction.
func TestNarrowHandChecked(t *testing.T) {
	p := math.Pow
	for _, tc := range []struct {
		name string
		x    float64
		f16  uint16
		bf16 uint16
	}{
		{"one", 1, 0x3c00, 0x3f80},
		{"minus two", -2, 0xc000, 0xc000},
		{"zero", 0, 0x0000, 0x0000},
		{"minus zero", math.Copysign(0, -1), 0x8000, 0x8000},
		{"0.1", 0.1, 0x2e66, 0x3dcd},
		{"1/3", 1.0 / 3, 0x3555, 0x3eab},
		// 1 + 2^-11 lies halfway between 1 (fraction 0, even) and 1 + 2^-10.
		{"f16 tie to even down", 1 + p(2, -11), 0x3c00, 0x3f80},
		// 1 + 3*2^-11 lies halfway between 0x3c01 (odd) and 0x3c02.
		{"f16 tie to even up", 1 + 3*p(2, -11), 0x3c02, 0x3f80},
		// Just above the tie: a float64 rounded through float32 would lose
		// the 2^-40 and round to even instead.
		{"f16 above tie, one rounding", 1 + p(2, -11) + p(2, -40), 0x3c01, 0x3f80},
		{"bf16 tie to even down", 1 + p(2, -8), 0x3c04, 0x3f80},
		{"bf16 tie to even up", 1 + 3*p(2, -8), 0x3c0c, 0x3f82},
		{"f16 max", 65504, 0x7bff, 0x4780}, // 0x1.ffcp15: bfloat16 rounds up to 0x1p16
		{"f16 below overflow tie", 65519.99, 0x7bff, 0x4780},
		// 65520 is halfway between 65504 (fraction 0x3ff, odd) and 2^16,
		// which is past the largest exponent: infinity.
		{"f16 overflow tie", 65520, 0x7c00, 0x4780},
		{"f16 overflow", 1e6, 0x7c00, 0x4974},
		{"f32 max: bf16 overflows", math.MaxFloat32, 0x7c00, 0x7f80},
		{"bf16 max", 0x1.fep127, 0x7c00, 0x7f7f},
		{"inf", math.Inf(1), 0x7c00, 0x7f80},
		{"minus inf", math.Inf(-1), 0xfc00, 0xff80},
		{"nan", math.NaN(), 0x7e00, 0x7fc0},
		{"f16 least normal", p(2, -14), 0x0400, 0x3880},
		{"f16 least subnormal", p(2, -24), 0x0001, 0x3380},
		{"f16 largest subnormal", 1023 * p(2, -24), 0x03ff, 0x3880},
		// Halfway between the largest subnormal (odd) and the least normal.
		{"f16 subnormal tie up to normal", 1023.5 * p(2, -24), 0x0400, 0x3880},
		// Half the least subnormal: a tie between 0 (even) and 0x0001.
		{"f16 half least subnormal", p(2, -25), 0x0000, 0x3300},
		{"f16 0.75 least subnormal", 3 * p(2, -26), 0x0001, 0x3340},
		{"f16 2.5 least subnormals", 2.5 * p(2, -24), 0x0002, 0x3420},
		{"f16 3.5 least subnormals", -3.5 * p(2, -24), 0x8004, 0xb460},
		{"f16 far below", 1e-30, 0x0000, 0x0da2},
		{"bf16 subnormal", p(2, -130), 0x0000, 0x0008},
		{"bf16 least subnormal", p(2, -133), 0x0000, 0x0001},
		{"bf16 half least subnormal", p(2, -134), 0x0000, 0x0000},
		{"bf16 0.75 least subnormal", 3 * p(2, -135), 0x0000, 0x0001},
		{"float64 subnormal", 5e-324, 0x0000, 0x0000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.f16, Float16Bits(tc.x), "float16 %#04x", Float16Bits(tc.x))
			assert.Equal(t, tc.bf16, BFloat16Bits(tc.x), "bfloat16 %#04x", BFloat16Bits(tc.x))
		})
	}
}

func TestWidenHandChecked(t *testing.T) {
	p := math.Pow
	for _, tc := range []struct {
		h         uint16
		f16, bf16 float64
	}{
		{0x3c00, 1, 0x1p-7},
		{0x0001, p(2, -24), p(2, -133)},
		{0x03ff, 1023 * p(2, -24), 0x1.fep-120},
		{0x0400, p(2, -14), 0x1p-119},
		{0x7bff, 65504, 0x1.fep120},
		{0x7c00, math.Inf(1), 0x1p121},
		{0xfc00, math.Inf(-1), -0x1p121},
		{0x3555, 0.333251953125, 0x1.aap-21},
		{0x7f80, math.NaN(), math.Inf(1)},
		{0xff80, math.NaN(), math.Inf(-1)},
		{0x7fc0, math.NaN(), math.NaN()},
	} {
		for _, c := range []struct {
			got  float32
			want float64
		}{{Float16ToFloat32(tc.h), tc.f16}, {BFloat16ToFloat32(tc.h), tc.bf16}} {
			if math.IsNaN(c.want) {
				assert.True(t, math.IsNaN(float64(c.got)), "%#04x", tc.h)
				continue
			}
			assert.Equal(t, float32(c.want), c.got, "%#04x", tc.h)
		}
	}
	assert.True(t, math.Signbit(float64(Float16ToFloat32(0x8000))))
	assert.True(t, math.Signbit(float64(BFloat16ToFloat32(0x8000))))
}

// Every pattern of either type widens and narrows back to itself (NaNs to
// a NaN, keeping the sign).
func TestHalfRoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		h := uint16(h)
		for _, c := range []struct {
			name   string
			widen  func(uint16) float32
			narrow func(float64) uint16
		}{{"float16", Float16ToFloat32, Float16Bits}, {"bfloat16", BFloat16ToFloat32, BFloat16Bits}} {
			v := c.widen(h)
			back := c.narrow(float64(v))
			if math.IsNaN(float64(v)) {
				require.True(t, math.IsNaN(float64(c.widen(back))), "%s %#04x", c.name, h)
				require.Equal(t, h&0x8000, back&0x8000, "%s %#04x", c.name, h)
				continue
			}
			require.Equal(t, h, back, "%s %#04x", c.name, h)
		}
	}
}

// nearestRef rounds x to the nearest of the sorted finite non-negative
// values vals (patterns 0..len-1) by search: ties go to the even pattern,
// and a value at or past the midpoint between the largest and the next
// power of the exponent step is infinity (pattern inf).
func nearestRef(x float64, vals []float64, next float64, inf uint16) uint16 {
	sign := uint16(0)
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	top := vals[len(vals)-1]
	if x >= (top+next)/2 {
		return sign | inf
	}
	i := sort.SearchFloat64s(vals, x) // vals[i-1] < x <= vals[i]
	if i == len(vals) {
		return sign | uint16(len(vals)-1)
	}
	if vals[i] == x || i == 0 {
		return sign | uint16(i)
	}
	lo, hi := x-vals[i-1], vals[i]-x
	switch {
	case lo < hi:
		return sign | uint16(i-1)
	case hi < lo:
		return sign | uint16(i)
	}
	if i%2 == 0 {
		return sign | uint16(i)
	}
	return sign | uint16(i-1)
}

// Narrowing random float32 and float64 values, over every exponent either
// type reaches and beyond, matches a search for the nearest value.
func TestNarrowMatchesSearch(t *testing.T) {
	var f16, bf16 []float64
	for h := range 0x7c00 {
		f16 = append(f16, float64(Float16ToFloat32(uint16(h))))
	}
	for h := range 0x7f80 {
		bf16 = append(bf16, float64(BFloat16ToFloat32(uint16(h))))
	}
	rng := tensor.NewRNG(7)
	for i := range 200000 {
		var x float64
		if i%2 == 0 { // a float32 of any finite exponent
			b := uint32(rng.Uint64()) &^ 0x7f800000
			b |= uint32(rng.IntN(255)) << 23
			x = float64(math.Float32frombits(b))
		} else { // a float64 near either type's range
			x = math.Ldexp(1+rng.Float64(), rng.IntN(300)-150)
			if rng.IntN(2) == 0 {
				x = -x
			}
		}
		require.Equal(t, nearestRef(x, f16, 65536, 0x7c00), Float16Bits(x), "float16 of %v", x)
		require.Equal(t, nearestRef(x, bf16, math.Ldexp(1, 128), 0x7f80), BFloat16Bits(x), "bfloat16 of %v", x)
	}
}

func TestExactFloat64(t *testing.T) {
	// 2^62 + 2^54 + 1 lies just above the bfloat16 tie between 2^62 and
	// 2^62 + 2^55; float64(v) drops the 1 and would round to even (2^62).
	v := int64(1)<<62 | 1<<54 | 1
	assert.Equal(t, BFloat16Bits(0x1.02p62), BFloat16Bits(ExactFloat64(v)))
	assert.Equal(t, BFloat16Bits(-0x1.02p62), BFloat16Bits(ExactFloat64(-v)))
	assert.Equal(t, BFloat16Bits(0x1p62), BFloat16Bits(float64(v)), "the naive conversion this guards against")
	for _, v := range []int64{0, 1, -1, 1 << 53, -(1 << 53), math.MaxInt64, math.MinInt64, 12345} {
		assert.Equal(t, float32(v), float32(ExactFloat64(v)), "%d", v)
	}
}

// FLOAT16 and BFLOAT16 initializers and TENSOR attributes decode from
// raw_data (two bytes an element, little-endian) and int32_data (one bit
// pattern an entry) into float32, their Elem kept.
func TestHalfTensors(t *testing.T) {
	f16, bf16 := pb.TensorProto_FLOAT16, pb.TensorProto_BFLOAT16
	for _, tc := range []struct {
		name string
		et   pb.TensorProto_DataType
		t    *pb.TensorProto
		want []float32
		err  string
	}{
		{"f16 raw", f16, &pb.TensorProto{Dims: []int64{2, 2}, RawData: []byte{0x00, 0x3c, 0x01, 0x00, 0x00, 0xfc, 0xff, 0x7b}}, []float32{1, 0x1p-24, float32(math.Inf(-1)), 65504}, ""},
		{"bf16 raw", bf16, &pb.TensorProto{Dims: []int64{3}, RawData: []byte{0x80, 0x3f, 0x00, 0xc0, 0x01, 0x00}}, []float32{1, -2, 0x1p-133}, ""},
		{"f16 int32_data", f16, &pb.TensorProto{Dims: []int64{2}, Int32Data: []int32{0x3555, 0x8000}}, []float32{0.333251953125, float32(math.Copysign(0, -1))}, ""},
		{"bf16 int32_data", bf16, &pb.TensorProto{Dims: []int64{1}, Int32Data: []int32{0x3f80}}, []float32{1}, ""},
		{"raw odd length", f16, &pb.TensorProto{Dims: []int64{2}, RawData: []byte{1, 2, 3}}, nil, "declares dims [2] (2 elements of 2 bytes, 4 bytes) but raw_data holds 3 bytes"},
		{"int32_data short", bf16, &pb.TensorProto{Dims: []int64{1 << 40}, Int32Data: []int32{1}}, nil, "but its BFLOAT16 data holds 1 elements"},
		{"int32_data not a pattern", f16, &pb.TensorProto{Dims: []int64{2}, Int32Data: []int32{1, 70000}}, nil, "element 1 is 70000 in int32_data; expected a FLOAT16 bit pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, a, ok := decodeTensor(t, tc.t, tc.et, tc.err)
			if !ok {
				return
			}
			assert.Equal(t, tensor.Float32, in.Tensor.DType())
			assert.Equal(t, tc.want, in.Tensor.Float32s())
			for i, w := range tc.want { // -0 and +0 compare equal above
				assert.Equal(t, math.Signbit(float64(w)), math.Signbit(float64(in.Tensor.Float32s()[i])))
			}
			assert.Equal(t, tc.want, a.Value.(*tensor.Tensor).Float32s())
		})
	}
}
