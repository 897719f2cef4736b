package run

import (
	"bytes"
	"math"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// planModels are the recorded models whose every batch runs on a plan:
// each node left after folding has a plan form.
var planModels = map[string]bool{
	"mlp": true, "cnn": true, "textcnn": true, "torch_mlp_opset17": true, "torch_mlp_default": true,
	"torch_textcnn_opset17": true, "torch_textcnn_default": true,
}

// Every recorded model gives the same outputs on the plan (Run) as on the
// interpreter (Interpret) within float32 tolerance, at batch 1 and 8, and
// PathFor names the path Run took.
func TestPlanMatchesInterpreter(t *testing.T) {
	for _, name := range recordedModels {
		t.Run(name, func(t *testing.T) {
			rec := loadRecorded(t, name)
			m, err := Load(filepath.Join("testdata", name+".onnx"))
			require.NoError(t, err)
			for _, c := range rec.Cases {
				in := map[string]*tensor.Tensor{}
				dims := map[string][]int{}
				for k, a := range c.Inputs {
					in[k] = a.tensor(t)
					dims[k] = a.Dims
				}
				path, why, err := m.PathFor(dims)
				require.NoError(t, err)
				t.Logf("batch %d: %v %s", c.Batch, path, why)
				if planModels[name] {
					assert.Equal(t, PathPlan, path, why)
				}
				got, err := m.Run(in)
				require.NoError(t, err)
				want, err := m.Interpret(in)
				require.NoError(t, err)
				require.Len(t, got, len(want))
				for k, w := range want {
					g := got[k]
					require.NotNil(t, g, k)
					require.Equal(t, w.Shape(), g.Shape(), k)
					require.Equal(t, w.DType(), g.DType(), k)
					scale := 1.0
					for i := range w.Size() {
						scale = max(scale, math.Abs(w.At(i)))
					}
					for i := range w.Size() {
						require.InDelta(t, w.At(i), g.At(i), 1e-5*scale, "%s[%d]", k, i)
					}
				}
			}
		})
	}
}

// Explain names the path and, on the plan, prints the plan's passes.
func TestExplainNamesPath(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "cnn.onnx"))
	require.NoError(t, err)
	rec := loadRecorded(t, "cnn")
	dims := map[string][]int{}
	for k, a := range rec.Cases[0].Inputs {
		dims[k] = a.Dims
	}
	var b bytes.Buffer
	require.NoError(t, m.Explain(&b, dims))
	assert.Contains(t, b.String(), "path: plan")
	assert.Contains(t, b.String(), "after the passes")
}

// randomF32 is a tensor of normal draws of the given dims.
func randomF32(r *rand.Rand, dims ...int) *tensor.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return tensor.MustFromSlice(v, dims...)
}

// A MobileNet/EfficientNet-like block on odd shapes: a strided conv with
// Clip(-1, 2.5) after it, a depthwise conv with SiLU (Sigmoid and Mul)
// after it, a squeeze-and-excitation gate (GlobalAveragePool, conv,
// Sigmoid, broadcast Mul) and a residual Add. On the plan the two
// activations fuse into their convolutions (conv2d+clip, conv2d+silu) and
// the outputs equal the interpreter's, at a symbolic batch of 1 and 3.
func TestPlanFusesConvActivations(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pads := onnx.Attr{Name: "pads", Value: []int64{1, 1, 1, 1}}
	inits := map[string]*tensor.Tensor{
		"w1": randomF32(r, 6, 3, 3, 3), "b1": randomF32(r, 6),
		"wd": randomF32(r, 6, 1, 3, 3), "bd": randomF32(r, 6),
		"we": randomF32(r, 6, 6, 1, 1), "be": randomF32(r, 6),
		"lo": tensor.Scalar(float32(-1)), "hi": tensor.Scalar(float32(2.5)),
	}
	m := graphOf(17, []onnx.Value{input("x", elemFloat, -1, 3, 11, 9)}, inits, []string{"y"},
		nodeOf("c1", "Conv", []string{"x", "w1", "b1"}, []string{"c1"}, pads, onnx.Attr{Name: "strides", Value: []int64{2, 2}}),
		nodeOf("clip", "Clip", []string{"c1", "lo", "hi"}, []string{"a1"}),
		nodeOf("dw", "Conv", []string{"a1", "wd", "bd"}, []string{"d"}, pads, onnx.Attr{Name: "group", Value: int64(6)}),
		nodeOf("sig", "Sigmoid", []string{"d"}, []string{"s"}),
		nodeOf("silu", "Mul", []string{"s", "d"}, []string{"a2"}),
		nodeOf("gap", "GlobalAveragePool", []string{"a2"}, []string{"g"}),
		nodeOf("se", "Conv", []string{"g", "we", "be"}, []string{"e"}),
		nodeOf("gate", "Sigmoid", []string{"e"}, []string{"ge"}),
		nodeOf("scale", "Mul", []string{"a2", "ge"}, []string{"sc"}),
		nodeOf("res", "Add", []string{"sc", "a1"}, []string{"y"}),
	)
	c, err := Compile(m)
	require.NoError(t, err)
	for _, batch := range []int{1, 3} {
		x := randomF32(r, batch, 3, 11, 9)
		in := map[string]*tensor.Tensor{"x": x}
		got, err := c.Run(in)
		require.NoError(t, err)
		want, err := c.Interpret(in)
		require.NoError(t, err)
		require.Equal(t, want["y"].Shape(), got["y"].Shape())
		assert.InDeltaSlice(t, want["y"].Float32s(), got["y"].Float32s(), 1e-5)
		var b bytes.Buffer
		require.NoError(t, c.Explain(&b, map[string][]int{"x": {batch, 3, 11, 9}}))
		assert.Contains(t, b.String(), "path: plan")
		assert.Contains(t, b.String(), "conv2d+clip")
		assert.Contains(t, b.String(), "conv2d+silu")
	}
}

// Gemm's general form (alpha, beta, transA, a run-time B) and a
// LayerNormalization without B go on the plan in float64 as in float32,
// and equal the interpreter.
func TestPlanGemmGeneralAndLayerNorm(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for _, elem := range []onnx.ElemType{elemFloat, elemDouble} {
		dt, _ := runtimeDType(elem)
		cast := func(x *tensor.Tensor) *tensor.Tensor {
			y, err := x.Cast(dt)
			require.NoError(t, err)
			return y
		}
		m := graphOf(17, []onnx.Value{input("a", elem, 5, -1), input("b", elem, 5, 7)},
			map[string]*tensor.Tensor{"c": cast(randomF32(r, 7)), "g": cast(randomF32(r, 7))}, []string{"y"},
			nodeOf("gemm", "Gemm", []string{"a", "b", "c"}, []string{"p"},
				onnx.Attr{Name: "alpha", Value: float32(0.5)}, onnx.Attr{Name: "beta", Value: float32(2)}, onnx.Attr{Name: "transA", Value: int64(1)}),
			nodeOf("ln", "LayerNormalization", []string{"p", "g"}, []string{"y"}),
		)
		c, err := Compile(m)
		require.NoError(t, err)
		in := map[string]*tensor.Tensor{"a": cast(randomF32(r, 5, 3)), "b": cast(randomF32(r, 5, 7))}
		path, why, err := c.PathFor(map[string][]int{"a": {5, 3}, "b": {5, 7}})
		require.NoError(t, err)
		require.Equal(t, PathPlan, path, why)
		got, err := c.Run(in)
		require.NoError(t, err)
		want, err := c.Interpret(in)
		require.NoError(t, err)
		require.Equal(t, dt, got["y"].DType())
		require.Equal(t, want["y"].Shape(), got["y"].Shape())
		for i := range want["y"].Size() {
			require.InDelta(t, want["y"].At(i), got["y"].At(i), 1e-5, "%v y[%d]", dt, i)
		}
	}
}

// The plan's gather and transpose ops against ops' Gather and Transpose
// on random odd shapes, every axis and permutation tried, negative
// indices, float32 and float64; an index out of range is an error.
func TestPlanGatherAndTransposeMatchOps(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x, err := randomF32(r, 3, 5, 7).Cast(dt)
		require.NoError(t, err)
		for axis := range 3 {
			n := x.Dim(axis)
			idx := tensor.MustFromSlice([]int64{0, int64(n - 1), -1, int64(-n), 1, 1}, 2, 3)
			got, err := ops.Run(&gatherOp{axis: axis}, x, idx)
			require.NoError(t, err)
			pos := tensor.MustFromSlice([]int64{0, int64(n - 1), int64(n - 1), 0, 1, 1}, 2, 3)
			want, err := ops.Gather(x, pos, axis)
			require.NoError(t, err)
			require.Equal(t, want.Shape(), got.Shape())
			require.Equal(t, mustF64(t, want), mustF64(t, got), "%v axis %d", dt, axis)
			_, err = ops.Run(&gatherOp{axis: axis}, x, tensor.MustFromSlice([]int64{int64(n)}, 1))
			require.ErrorContains(t, err, "out of range")
		}
		for _, perm := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
			got, err := ops.Run(&permuteOp{perm: perm}, x)
			require.NoError(t, err)
			want, err := ops.Transpose(x, perm...)
			require.NoError(t, err)
			require.Equal(t, want.Shape(), got.Shape())
			require.Equal(t, mustF64(t, want), mustF64(t, got), "%v perm %v", dt, perm)
		}
	}
}

// mustF64 is x's values as float64s (exact for float32).
func mustF64(t *testing.T, x *tensor.Tensor) []float64 {
	t.Helper()
	y, err := x.Cast(tensor.Float64)
	require.NoError(t, err)
	return y.Float64s()
}
