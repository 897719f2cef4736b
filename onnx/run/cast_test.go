package run

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// castOne runs Cast(to) on x, an input of ONNX type elem.
func castOne(t *testing.T, x *tensor.Tensor, elem, to onnx.ElemType) *tensor.Tensor {
	t.Helper()
	m := graphOf(21, []onnx.Value{input("x", elem, int64(x.Size()))}, nil, []string{"y"},
		nodeOf("cast", "Cast", []string{"x"}, []string{"y"}, onnx.Attr{Name: "to", Value: int64(to)}))
	return runOne(t, m, x)
}

func f32s(v ...float32) *tensor.Tensor { return tensor.MustFromSlice(v, len(v)) }

func f64s(v ...float64) *tensor.Tensor { return tensor.MustFromSlice(v, len(v)) }

// bitsOf returns the float32 values of 16-bit patterns of the type elem.
func bitsOf(elem onnx.ElemType, hs ...uint16) []float32 {
	out := make([]float32, len(hs))
	for i, h := range hs {
		if elem == elemBFloat16 {
			out[i] = onnx.BFloat16ToFloat32(h)
		} else {
			out[i] = onnx.Float16ToFloat32(h)
		}
	}
	return out
}

// Cast between every pair of the types it supports, on values whose
// results were worked out by hand: ties to even, subnormals, overflow to
// infinity, NaN, truncation toward zero, and a DOUBLE rounded to FLOAT16
// once rather than through float32.
func TestCast(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	p := math.Pow
	for _, tc := range []struct {
		name     string
		x        *tensor.Tensor
		from, to onnx.ElemType
		want     any // []float32, []float64, []int32 or []int64; NaN compared as NaN
	}{
		{"float to float16: ties, subnormals, overflow", f32s(1+0x1p-11, 1+3*0x1p-11, 0x1p-25, 3*0x1p-26, 65504, 65520, -1e6, 0x1p-14),
			elemFloat, elemFloat16, bitsOf(elemFloat16, 0x3c00, 0x3c02, 0x0000, 0x0001, 0x7bff, 0x7c00, 0xfc00, 0x0400)},
		{"float to bfloat16: ties, subnormal, overflow", f32s(1+0x1p-8, 1+3*0x1p-8, 0x1p-134, 3*0x1p-135, math.MaxFloat32, 0x1.fep127, 0.1),
			elemFloat, elemBFloat16, bitsOf(elemBFloat16, 0x3f80, 0x3f82, 0x0000, 0x0001, 0x7f80, 0x7f7f, 0x3dcd)},
		{"double to float16 rounds once", f64s(1+p(2, -11)+p(2, -40), -(1 + p(2, -11))),
			elemDouble, elemFloat16, bitsOf(elemFloat16, 0x3c01, 0xbc00)},
		{"double to bfloat16 rounds once", f64s(1 + p(2, -8) + p(2, -40)),
			elemDouble, elemBFloat16, bitsOf(elemBFloat16, 0x3f81)},
		{"float16 nan and inf stay", f32s(float32(nan), float32(inf), float32(-inf)),
			elemFloat, elemFloat16, []float32{float32(nan), float32(inf), float32(-inf)}},
		{"int64 to float16", ints(2049, 2051, 65519, 65520, -70000),
			elemInt64, elemFloat16, []float32{2048, 2052, 65504, float32(inf), float32(-inf)}},
		// 2^62 + 2^54 + 1 is just above the bfloat16 tie between 2^62 and
		// 2^62 + 2^55, which float64(v) would round to even.
		{"int64 to bfloat16 rounds once", ints(1<<62|1<<54|1, 257),
			elemInt64, elemBFloat16, []float32{0x1.02p62, 256}},
		{"int64 to float rounds once", ints(1<<53 + 1<<29 + 1), elemInt64, elemFloat, []float32{0x1.000002p53}},
		{"float16 to int truncates", f32s(2.75, -2.75, float32(nan), 1e30, -1e30),
			elemFloat16, elemInt64, []int64{2, -2, 0, math.MaxInt64, math.MinInt64}},
		{"float to int32 saturates", f32s(3e9, -3e9, -0.5), elemFloat, elemInt32, []int32{math.MaxInt32, math.MinInt32, 0}},
		{"int64 to int32 keeps the low bits", ints(1<<32+5, -1), elemInt64, elemInt32, []int32{5, -1}},
		{"float to bool", f32s(0, float32(math.Copysign(0, -1)), 0.5, float32(nan), float32(-inf)),
			elemFloat, elemBool, []int64{0, 0, 1, 1, 1}},
		{"bool to bfloat16", ints(1, 0), elemBool, elemBFloat16, []float32{1, 0}},
		{"bool to double", ints(0, 1), elemBool, elemDouble, []float64{0, 1}},
		{"float16 to double is exact", f32s(onnx.Float16ToFloat32(0x0001), onnx.Float16ToFloat32(0x3555)),
			elemFloat16, elemDouble, []float64{p(2, -24), 0.333251953125}},
		{"double to float", f64s(1+p(2, -24), 1+p(2, -24)+p(2, -50)), elemDouble, elemFloat, []float32{1, 1 + 0x1p-23}},
		{"int32 to int64", tensor.MustFromSlice([]int32{-7, 7}, 2), elemInt32, elemInt64, []int64{-7, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := castOne(t, tc.x, tc.from, tc.to)
			switch want := tc.want.(type) {
			case []float32:
				require.Equal(t, tensor.Float32, y.DType())
				got := y.Float32s()
				require.Len(t, got, len(want))
				for i := range want {
					if math.IsNaN(float64(want[i])) {
						assert.True(t, math.IsNaN(float64(got[i])), "element %d: %v", i, got[i])
						continue
					}
					assert.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "element %d: want %v got %v", i, want[i], got[i])
				}
			case []float64:
				assert.Equal(t, want, y.Float64s())
			case []int32:
				assert.Equal(t, want, y.Int32s())
			case []int64:
				assert.Equal(t, want, y.Int64s())
			}
		})
	}
}

func TestCastErrors(t *testing.T) {
	for _, tc := range []struct {
		to   int64
		want string
	}{
		{8, "to = STRING is not supported; expected FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT32, INT64 or BOOL"},
		{17, "to = FLOAT8E4M3FN is not supported"},
		{-3, "is not supported"},
	} {
		m := graphOf(21, []onnx.Value{input("x", elemFloat, 2)}, nil, []string{"y"},
			nodeOf("c", "Cast", []string{"x"}, []string{"y"}, onnx.Attr{Name: "to", Value: tc.to}))
		_, err := Compile(m)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `node 0 "c" (Cast, opset 21)`)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// A model stored in FLOAT16 and BFLOAT16 (a FLOAT16 input given as
// float32, a BFLOAT16 initializer, a FLOAT16 Constant) computes in float32;
// Cast back to FLOAT16 rounds the result, and the graph's folded shape
// arithmetic is untouched.
func TestHalfModel(t *testing.T) {
	g := graphOf(21, []onnx.Value{input("x", elemFloat16, -1, 2)}, nil, []string{"y"},
		nodeOf("k", "Constant", nil, []string{"k"}, onnx.Attr{Name: "value", Elem: elemFloat16, Value: f32s(onnx.Float16ToFloat32(0x3c01), 1)}),
		nodeOf("add", "Add", []string{"x", "w"}, []string{"s"}),
		nodeOf("mul", "Mul", []string{"s", "k"}, []string{"p"}),
		nodeOf("cast", "Cast", []string{"p"}, []string{"y"}, onnx.Attr{Name: "to", Value: int64(elemFloat16)}))
	g.Graph.Initializers = append(g.Graph.Initializers, onnx.Initializer{Name: "w", Elem: elemBFloat16, Tensor: f32s(onnx.BFloat16ToFloat32(0x3f81), 0.5)})
	c, err := Compile(g)
	require.NoError(t, err)
	out, err := c.Run(map[string]*tensor.Tensor{"x": tensor.MustFromSlice([]float32{1, 2, 65504, -1}, 2, 2)})
	require.NoError(t, err)
	y := out["y"]
	require.Equal(t, tensor.Shape{2, 2}, y.Shape())
	w0, k0 := float64(onnx.BFloat16ToFloat32(0x3f81)), float64(onnx.Float16ToFloat32(0x3c01))
	want := []float32{
		onnx.Float16ToFloat32(onnx.Float16Bits(float64(float32(float32(1+w0) * float32(k0))))),
		2.5,
		onnx.Float16ToFloat32(onnx.Float16Bits(float64(float32(float32(65504+w0) * float32(k0))))),
		-0.5,
	}
	assert.Equal(t, want, y.Float32s())
	assert.True(t, math.IsInf(float64(y.Float32s()[2]), 1), "65504 × (1 + 2^-10) overflows float16")
}

// testdata/float16.onnx, written by onnx's own helpers (make.py), is a
// FLOAT16 Add of an input and an initializer [1, 2].
func TestFloat16File(t *testing.T) {
	m, err := onnx.Load("../testdata/float16.onnx")
	require.NoError(t, err)
	require.Equal(t, onnx.ElemType(elemFloat16), m.Graph.Initializers[0].Elem)
	require.Equal(t, []float32{1, 2}, m.Graph.Initializers[0].Tensor.Float32s())
	c, err := Compile(m)
	require.NoError(t, err)
	out, err := c.Run(map[string]*tensor.Tensor{"x": f32s(0.5, -3)})
	require.NoError(t, err)
	assert.Equal(t, []float32{1.5, -1}, out["y"].Float32s())
	_, err = c.Run(map[string]*tensor.Tensor{"x": f64s(0.5, -3)})
	assert.ErrorContains(t, err, `graph input "x" is float64`)
}
