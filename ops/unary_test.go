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
	case "hard_swish": // both sides of the kinks at -3 and 3, and of 0
		return tensor.MustFromSlice([]float64{-4.2, -3.1, -2.9, -1.3, -0.4, 0.3, 1.1, 2.2, 2.9, 3.1, 4.4, -7.5}, 3, 4)
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
		// Computed with Python's math module from tf.math.erf's, tf.nn.selu's,
		// mish's (x·tanh(log1p(exp(x)))) and hard_swish's (x·relu6(x+3)/6)
		// definitions.
		{"erf", nil, []float64{-0.9953222650189527, -0.5204998778130465, 0, 0.9661051464753108, 1.0}},
		{"selu", nil, []float64{-1.5201664685956948, -0.6917581878028713, 0, 1.5760514810332207, 7.354906911488364}},
		{"mish", nil, []float64{-0.2525014826957089, -0.22074377465173, 0, 1.4033782663958028, 6.999988379809741}},
		{"hard_swish", nil, []float64{-1.0 / 3, -0.20833333333333334, 0, 1.125, 7}},
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

// The activations added for ONNX import (erf, selu, mish, hard_swish) match
// a plain evaluation of their definitions on an odd-sized rank-3 tensor, in
// both dtypes, and their gradients match the definitions' derivatives
// written out independently of the op table.
func TestActivationsMatchReference(t *testing.T) {
	const lambda, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
	relu6 := func(v float64) float64 { return math.Min(math.Max(v, 0), 6) }
	cases := []struct {
		op   string
		f, d func(float64) float64
	}{
		{"erf", math.Erf, func(v float64) float64 { return 2 / math.Sqrt(math.Pi) * math.Exp(-v*v) }},
		{"selu",
			func(v float64) float64 {
				if v > 0 {
					return lambda * v
				}
				return lambda * alpha * (math.Exp(v) - 1)
			},
			func(v float64) float64 {
				if v >= 0 {
					return lambda
				}
				return lambda * alpha * math.Exp(v)
			}},
		{"mish",
			func(v float64) float64 { return v * math.Tanh(math.Log(1+math.Exp(v))) },
			func(v float64) float64 {
				sp := math.Log(1 + math.Exp(v))
				sech := 1 / math.Cosh(sp)
				return math.Tanh(sp) + v*sech*sech/(1+math.Exp(-v))
			}},
		{"hard_swish",
			func(v float64) float64 { return v * relu6(v+3) / 6 },
			func(v float64) float64 {
				switch {
				case v <= -3:
					return 0
				case v >= 3:
					return 1
				}
				return (2*v + 3) / 6
			}},
	}
	x := randn(31, 3, 5, 7)
	for i := range x.Size() {
		x.Float64s()[i] *= 3
	}
	gout := randn(32, 3, 5, 7)
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
				xt, gt, atol := x, gout, 1e-12
				if dt == tensor.Float32 {
					xt, gt, atol = f32(x), f32(gout), 1e-6
				}
				op := UnaryOp(c.op)
				y, err := op.Forward(ins(xt))
				require.NoError(t, err)
				require.Equal(t, dt, y.DType())
				g, err := op.Backward(ins(xt), y, gt, []bool{true})
				require.NoError(t, err)
				for i := range xt.Size() {
					v := xt.At(i)
					require.InDelta(t, c.f(v), y.At(i), atol*(1+math.Abs(v)), "%v y[%d] at %v", dt, i, v)
					require.InDelta(t, gt.At(i)*c.d(v), g[0].At(i), atol*(1+math.Abs(v)), "%v dx[%d] at %v", dt, i, v)
				}
			}
		})
	}
}

// At their special points the activations take the values and the
// derivatives their definitions and TF give: erf and mish are 0 at 0 with
// slopes 2/√π and 0.6; selu's derivative at 0 is λ (TF's SeluGrad reads the
// output); hard_swish is 0 below -3 and x above 3, with derivative 0 at -3,
// 1/2 at 0 and 1 at 3 (relu6's gradient is 0 at its kinks).
func TestActivationsSpecialPoints(t *testing.T) {
	cases := []struct {
		op      string
		x       []float64
		y, dydx []float64
	}{
		{"erf", []float64{0, math.Inf(1), math.Inf(-1)}, []float64{0, 1, -1}, []float64{2 / math.Sqrt(math.Pi), 0, 0}},
		{"selu", []float64{0, -1000}, []float64{0, -seluScale * seluAlpha}, []float64{seluScale, 0}},
		{"mish", []float64{0, -1000, 1000}, []float64{0, 0, 1000}, []float64{0.6, 0, 1}},
		{"hard_swish", []float64{-3, 0, 3, -5, 5}, []float64{0, 0, 3, 0, 5}, []float64{0, 0.5, 1, 0, 1}},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			x := tensor.MustFromSlice(c.x, len(c.x))
			op := UnaryOp(c.op)
			y, err := op.Forward(ins(x))
			require.NoError(t, err)
			ones := tensor.MustFromSlice(make([]float64, len(c.x)), len(c.x))
			for i := range c.x {
				ones.Float64s()[i] = 1
			}
			g, err := op.Backward(ins(x), y, ones, []bool{true})
			require.NoError(t, err)
			for i := range c.x {
				require.InDelta(t, c.y[i], y.At(i), 1e-12, "y at %v", c.x[i])
				require.InDelta(t, c.dydx[i], g[0].At(i), 1e-12, "dy/dx at %v", c.x[i])
			}
		})
	}
}
