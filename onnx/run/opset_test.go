package run

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// runOne compiles and runs a model with the one input x.
func runOne(t *testing.T, m *onnx.Model, x *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	c, err := Compile(m)
	require.NoError(t, err)
	out, err := c.Run(map[string]*tensor.Tensor{"x": x})
	require.NoError(t, err)
	return out["y"]
}

// The opset decides where Squeeze's, Unsqueeze's and the reductions' axes
// come from (an attribute, or an input from opset 13, 18 for ReduceMean),
// and whether Softmax normalises one axis (13 on) or the input coerced to
// 2-D (before 13). Both forms give the same result where they mean the
// same thing.
func TestOpsetDependentForms(t *testing.T) {
	x := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 1, 3)
	xs := []onnx.Value{input("x", elemFloat, 2, 1, 3)}
	axes := onnx.Attr{Name: "axes", Value: []int64{1}}
	consts := map[string]*tensor.Tensor{"a": ints(1)}
	for _, tc := range []struct {
		name  string
		model *onnx.Model
		shape []int
		want  []float32
	}{
		{"squeeze attr 11", graphOf(11, xs, nil, []string{"y"}, nodeOf("s", "Squeeze", []string{"x"}, []string{"y"}, axes)), []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}},
		{"squeeze input 13", graphOf(13, xs, consts, []string{"y"}, nodeOf("s", "Squeeze", []string{"x", "a"}, []string{"y"})), []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}},
		{"squeeze all 13", graphOf(13, xs, nil, []string{"y"}, nodeOf("s", "Squeeze", []string{"x"}, []string{"y"})), []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}},
		{"unsqueeze attr 12", graphOf(12, xs, nil, []string{"y"}, nodeOf("u", "Unsqueeze", []string{"x"}, []string{"y"}, onnx.Attr{Name: "axes", Value: []int64{-1}})), []int{2, 1, 3, 1}, []float32{1, 2, 3, 4, 5, 6}},
		{"unsqueeze input 13", graphOf(13, xs, map[string]*tensor.Tensor{"a": ints(0)}, []string{"y"}, nodeOf("u", "Unsqueeze", []string{"x", "a"}, []string{"y"})), []int{1, 2, 1, 3}, []float32{1, 2, 3, 4, 5, 6}},
		{"reducesum attr 12", graphOf(12, xs, nil, []string{"y"}, nodeOf("r", "ReduceSum", []string{"x"}, []string{"y"}, onnx.Attr{Name: "axes", Value: []int64{2}}, onnx.Attr{Name: "keepdims", Value: int64(0)})), []int{2, 1}, []float32{6, 15}},
		{"reducesum input 13", graphOf(13, xs, map[string]*tensor.Tensor{"a": ints(2)}, []string{"y"}, nodeOf("r", "ReduceSum", []string{"x", "a"}, []string{"y"})), []int{2, 1, 1}, []float32{6, 15}},
		{"reducemean attr 17", graphOf(17, xs, nil, []string{"y"}, nodeOf("r", "ReduceMean", []string{"x"}, []string{"y"}, onnx.Attr{Name: "axes", Value: []int64{0}})), []int{1, 1, 3}, []float32{2.5, 3.5, 4.5}},
		{"reducemean input 18", graphOf(18, xs, map[string]*tensor.Tensor{"a": ints(0)}, []string{"y"}, nodeOf("r", "ReduceMean", []string{"x", "a"}, []string{"y"})), []int{1, 1, 3}, []float32{2.5, 3.5, 4.5}},
		{"reducemax all 18", graphOf(18, xs, nil, []string{"y"}, nodeOf("r", "ReduceMax", []string{"x"}, []string{"y"}, onnx.Attr{Name: "keepdims", Value: int64(0)})), []int{}, []float32{6}},
		{"reducemax noop 18", graphOf(18, xs, nil, []string{"y"}, nodeOf("r", "ReduceMax", []string{"x"}, []string{"y"}, onnx.Attr{Name: "noop_with_empty_axes", Value: int64(1)})), []int{2, 1, 3}, []float32{1, 2, 3, 4, 5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			y := runOne(t, tc.model, x)
			assert.Equal(t, tc.shape, []int(y.Shape().Clone()))
			assert.InDeltaSlice(t, tc.want, y.Float32s(), 1e-6)
		})
	}

	// Softmax before 13 normalises everything from axis 1 on (six values
	// per row); from 13 only axis 1 (one value: all ones).
	y11 := runOne(t, graphOf(11, xs, nil, []string{"y"}, nodeOf("sm", "Softmax", []string{"x"}, []string{"y"})), x)
	y13 := runOne(t, graphOf(13, xs, nil, []string{"y"}, nodeOf("sm", "Softmax", []string{"x"}, []string{"y"}, onnx.Attr{Name: "axis", Value: int64(1)})), x)
	z := 0.0
	for _, v := range []float64{1, 2, 3} {
		z += math.Exp(v)
	}
	assert.InDelta(t, math.Exp(1)/z, y11.Float32s()[0], 1e-6)
	assert.InDeltaSlice(t, []float32{1, 1, 1, 1, 1, 1}, y13.Float32s(), 1e-6)
}

// Shape vectors are tracked element by element: with a symbolic batch,
// Shape → Gather of a static dim folds to a constant while the batch's
// stays a step.
func TestPartialShapeFolding(t *testing.T) {
	m := graphOf(13, []onnx.Value{input("x", elemFloat, -1, 5)},
		map[string]*tensor.Tensor{"i0": tensor.Scalar(int64(0)), "i1": tensor.Scalar(int64(1)), "two": tensor.Scalar(int64(2))}, []string{"y", "f"},
		nodeOf("shape", "Shape", []string{"x"}, []string{"s"}),
		nodeOf("batch", "Gather", []string{"s", "i0"}, []string{"b"}),
		nodeOf("feat", "Gather", []string{"s", "i1"}, []string{"f0"}),
		nodeOf("double", "Mul", []string{"f0", "two"}, []string{"f"}),
		nodeOf("cast", "Cast", []string{"b"}, []string{"bf"}, onnx.Attr{Name: "to", Value: int64(elemFloat)}),
		nodeOf("scale", "Mul", []string{"x", "bf"}, []string{"y"}),
	)
	c, err := Compile(m)
	require.NoError(t, err)
	var steps []string
	for _, st := range c.steps {
		steps = append(steps, st.n.Name)
	}
	assert.Equal(t, []string{"shape", "batch", "cast", "scale"}, steps)
	x := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2, 5)
	out, err := c.Run(map[string]*tensor.Tensor{"x": x})
	require.NoError(t, err)
	assert.Equal(t, []int64{10}, out["f"].Int64s())
	assert.Equal(t, []float32{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}, out["y"].Float32s())
}

// A DOUBLE graph runs in float64 end to end and agrees with its FLOAT
// twin within float32 rounding.
func TestDoubleGraph(t *testing.T) {
	w := tensor.MustFromSlice([]float64{0.5, -1, 2, 0.25, 1.5, -0.75}, 3, 2)
	b := tensor.MustFromSlice([]float64{0.1, -0.2}, 2)
	build := func(elem onnx.ElemType, w, b *tensor.Tensor) *onnx.Model {
		return graphOf(13, []onnx.Value{input("x", elem, -1, 3)}, map[string]*tensor.Tensor{"w": w, "b": b}, []string{"y"},
			nodeOf("fc", "Gemm", []string{"x", "w", "b"}, []string{"h"}),
			nodeOf("act", "Tanh", []string{"h"}, []string{"t"}),
			nodeOf("sm", "Softmax", []string{"t"}, []string{"y"}))
	}
	w32, err := w.Cast(tensor.Float32)
	require.NoError(t, err)
	b32, err := b.Cast(tensor.Float32)
	require.NoError(t, err)
	x := tensor.MustFromSlice([]float64{1, 2, 3, -1, 0.5, 4}, 2, 3)
	x32, err := x.Cast(tensor.Float32)
	require.NoError(t, err)
	y64 := runOne(t, build(elemDouble, w, b), x)
	y32 := runOne(t, build(elemFloat, w32, b32), x32)
	require.Equal(t, tensor.Float64, y64.DType())
	for i, v := range y64.Float64s() {
		assert.InDelta(t, v, float64(y32.Float32s()[i]), 1e-6)
	}
	// Row 0 by hand: h = [1·0.5+2·2+3·1.5+0.1, 1·-1+2·0.25+3·-0.75-0.2].
	h0, h1 := math.Tanh(9.1), math.Tanh(-2.95)
	assert.InDelta(t, math.Exp(h0)/(math.Exp(h0)+math.Exp(h1)), y64.Float64s()[0], 1e-12)
}

func TestIsNaNIsInf(t *testing.T) {
	x := tensor.MustFromSlice([]float32{1, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}, 4)
	xs := []onnx.Value{input("x", elemFloat, 4)}
	for _, tc := range []struct {
		name string
		node onnx.Node
		want []int64
	}{
		{"isnan", nodeOf("n", "IsNaN", []string{"x"}, []string{"y"}), []int64{0, 1, 0, 0}},
		{"isinf", nodeOf("i", "IsInf", []string{"x"}, []string{"y"}), []int64{0, 0, 1, 1}},
		{"isinf negative only", nodeOf("i", "IsInf", []string{"x"}, []string{"y"}, onnx.Attr{Name: "detect_positive", Value: int64(0)}), []int64{0, 0, 0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, runOne(t, graphOf(13, xs, nil, []string{"y"}, tc.node), x).Int64s())
		})
	}
}

// A BOOL initializer (held as int64 0/1, Elem BOOL) is a condition for
// Where, and ConstantOfShape of a BOOL value makes a BOOL tensor.
func TestBoolConstants(t *testing.T) {
	g := graphOf(13, []onnx.Value{input("x", elemFloat, 2, 2)}, nil, []string{"y", "all"},
		nodeOf("w", "Where", []string{"mask", "x", "zero"}, []string{"y"}),
		nodeOf("ones", "ConstantOfShape", []string{"shape"}, []string{"t"}, onnx.Attr{Name: "value", Value: tensor.MustFromSlice([]int64{1}, 1), Elem: elemBool}),
		nodeOf("and", "And", []string{"t", "mask"}, []string{"all"}))
	g.Graph.Initializers = append(g.Graph.Initializers,
		onnx.Initializer{Name: "mask", Tensor: tensor.MustFromSlice([]int64{1, 0, 0, 1}, 2, 2), Elem: elemBool},
		onnx.Initializer{Name: "zero", Tensor: tensor.Scalar(float32(0))},
		onnx.Initializer{Name: "shape", Tensor: ints(2, 2)})
	c, err := Compile(g)
	require.NoError(t, err)
	out, err := c.Run(map[string]*tensor.Tensor{"x": tensor.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)})
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 0, 0, 4}, out["y"].Float32s())
	assert.Equal(t, []int64{1, 0, 0, 1}, out["all"].Int64s())

	// Without Elem BOOL the same int64 mask is INT64, which Where refuses.
	g.Graph.Initializers[0].Elem = 0
	_, err = Compile(g)
	assert.ErrorContains(t, err, `node 0 "w" (Where, opset 13): input 0 "mask" (condition) is INT64; expected BOOL`)
}
