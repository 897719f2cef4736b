package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// unaryDomain gives inputs away from each op's kinks and outside its
// undefined region, so central differences are valid.
func unaryInput(name string, seed uint64) *tensor.Tensor {
	switch name {
	case "log", "sqrt", "rsqrt":
		return randu(seed, 0.5, 3, 3, 4)
	case "relu6", "clip":
		return tensor.MustFromSlice([]float64{-1.3, -0.4, 0.3, 0.8, 2.2, 5.5, 6.6, 7.1, -2.5, 1.1, 3.7, 9.2}, 3, 4)
	}
	x := randn(seed, 3, 4)
	for i, v := range x.Float64s() { // nudge off the kink at 0
		if math.Abs(v) < 1e-3 {
			x.Float64s()[i] = 0.1
		}
	}
	return x
}

// unaryAttrs gives the parameterised unary ops TF's defaults (leaky_relu's
// alpha 0.2, elu's 1) and clip the range [0, 6].
func unaryAttrs(name string) Attrs {
	switch name {
	case "leaky_relu":
		return Attrs{Alpha: 0.2}
	case "elu":
		return Attrs{Alpha: 1}
	case "clip":
		return Attrs{Lo: 0, Hi: 6}
	}
	return Attrs{}
}

var _ = addUnaryGradCases()

func addUnaryGradCases() bool {
	for name := range unaryFns {
		x := unaryInput(name, 7)
		addGradCases(name, gradCase{name: "3x4", attrs: unaryAttrs(name), in: ins(x), wrt: []int{0}})
	}
	addGradCases("gelu", gradCase{name: "approximate_3x4", attrs: Attrs{Approximate: true}, in: ins(unaryInput("gelu", 8)), wrt: []int{0}})
	return true
}

// gelu with approximate is tf.nn.gelu(x, approximate=True): the op
// gelu_tanh, in its values, its name (so a device runs gelu_tanh's kernel)
// and its attributes.
func TestGeluApproximate(t *testing.T) {
	x := randn(3, 2, 5)
	for _, tc := range []struct {
		approximate bool
		want        string
	}{{false, "gelu"}, {true, "gelu_tanh"}} {
		op, err := Build("gelu", Attrs{Approximate: tc.approximate})
		require.NoError(t, err)
		require.Equal(t, tc.want, op.Name())
		got, err := Run(op, x)
		require.NoError(t, err)
		want, err := Run(UnaryOp(tc.want), x)
		require.NoError(t, err)
		require.Equal(t, want.Float64s(), got.Float64s())
	}
}

func TestUnaryForward(t *testing.T) {
	x := tensor.MustFromSlice([]float64{-2, -0.5, 0, 1.5, 7}, 5)
	cases := []struct {
		op   string
		p    []float64
		want []float64
	}{
		{"neg", nil, []float64{2, 0.5, 0, -1.5, -7}},
		{"abs", nil, []float64{2, 0.5, 0, 1.5, 7}},
		{"square", nil, []float64{4, 0.25, 0, 2.25, 49}},
		{"relu", nil, []float64{0, 0, 0, 1.5, 7}},
		{"relu6", nil, []float64{0, 0, 0, 1.5, 6}},
		{"leaky_relu", []float64{0.2}, []float64{-0.4, -0.1, 0, 1.5, 7}},
		{"clip", []float64{-1, 1}, []float64{-1, -0.5, 0, 1, 1}},
		{"elu", []float64{1}, []float64{math.Expm1(-2), math.Expm1(-0.5), 0, 1.5, 7}},
		{"sigmoid", nil, []float64{1 / (1 + math.Exp(2)), 1 / (1 + math.Exp(0.5)), 0.5, 1 / (1 + math.Exp(-1.5)), 1 / (1 + math.Exp(-7))}},
		{"tanh", nil, []float64{math.Tanh(-2), math.Tanh(-0.5), 0, math.Tanh(1.5), math.Tanh(7)}},
		{"softplus", nil, []float64{math.Log1p(math.Exp(-2)), math.Log1p(math.Exp(-0.5)), math.Log(2), math.Log1p(math.Exp(1.5)), math.Log1p(math.Exp(7))}},
		{"swish", nil, []float64{-2 / (1 + math.Exp(2)), -0.5 / (1 + math.Exp(0.5)), 0, 1.5 / (1 + math.Exp(-1.5)), 7 / (1 + math.Exp(-7))}},
		// Computed with Python's math.erf and math.tanh from the formulas in tf.nn.gelu.
		{"gelu", nil, []float64{-0.04550026389635842, -0.15426876936299344, 0, 1.399789198096713, 6.999999999991041}},
		{"gelu_tanh", nil, []float64{-0.04540230591222494, -0.15428599017485606, 0, 1.3995715769802328, 6.999999999999997}},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			got, err := UnaryOp(c.op, c.p...).Forward(ins(x))
			require.NoError(t, err)
			requireClose(t, tensor.MustFromSlice(c.want, 5), got, 1e-12, 1e-10)
			checkDTypes(t, func() Op { return UnaryOp(c.op, c.p...) }, x)
		})
	}
}

func TestUnaryMath(t *testing.T) {
	x := tensor.MustFromSlice([]float64{0.25, 1, 4}, 3)
	for _, c := range []struct {
		op string
		f  func(float64) float64
	}{
		{"exp", math.Exp}, {"log", math.Log}, {"sqrt", math.Sqrt},
		{"rsqrt", func(v float64) float64 { return 1 / math.Sqrt(v) }},
	} {
		got, err := UnaryOp(c.op).Forward(ins(x))
		require.NoError(t, err)
		for i, v := range x.Float64s() {
			require.InDelta(t, c.f(v), got.At(i), 1e-12, c.op)
		}
	}
}

func TestSoftplusLargeInputsStayFinite(t *testing.T) {
	y, err := Softplus(tensor.MustFromSlice([]float32{-1000, 1000}, 2))
	require.NoError(t, err)
	require.Equal(t, []float32{0, 1000}, y.Float32s())
}

func TestClipRejectsInvertedBounds(t *testing.T) {
	_, err := Clip(tensor.Zeros(tensor.Float32, 2), 1, 0)
	require.ErrorContains(t, err, "clip")
}

func TestUnaryRejectsInts(t *testing.T) {
	_, err := Relu(tensor.Zeros(tensor.Int64, 2))
	require.ErrorContains(t, err, "relu: inputs int64[2]")
}

// relu's vector kernels give what its table entry defines, f(x) and
// gout·d(x), on a float32 tensor long enough for the AVX loops and with an
// odd tail, in both dtypes.
func TestReluFastPathMatchesDefinition(t *testing.T) {
	x := randn(21, 1027)
	gout := randn(22, 1027)
	fn := unaryFns["relu"]
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		xt, gt := x, gout
		if dt == tensor.Float32 {
			xt, gt = f32(x), f32(gout)
		}
		op := UnaryOp("relu")
		y, err := op.Forward(ins(xt))
		require.NoError(t, err)
		g, err := op.Backward(ins(xt), y, gt, []bool{true})
		require.NoError(t, err)
		for i := range 1027 {
			xv, gv := xt.At(i), gt.At(i)
			require.Equal(t, fn.f(xv, [2]float64{}), y.At(i), "%v y[%d]", dt, i)
			require.Equal(t, gv*fn.d(xv, y.At(i), [2]float64{}), g[0].At(i), "%v dx[%d]", dt, i)
		}
	}
}
