package ops

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// reduceAttrs are the shapes and attrs every reduction is checked on.
var reduceAttrs = []struct {
	name  string
	shape []int
	axes  []int
	keep  bool
}{
	{"all", []int{3, 4}, nil, false},
	{"all_keep", []int{3, 4}, nil, true},
	{"middle", []int{2, 3, 4}, []int{1}, false},
	{"outer_last_keep", []int{2, 3, 4}, []int{0, -1}, true},
	{"last", []int{2, 5}, []int{-1}, false},
	{"scalar", []int{}, nil, false},
	{"vector", []int{6}, []int{0}, true},
	// unit axes among the reduced and kept ones: still one run per output
	{"last_past_unit", []int{3, 1, 5}, []int{2}, false},
	{"last_keep_units", []int{1, 7, 1, 9}, []int{-1}, true},
	{"unit_axis", []int{3, 1, 4}, []int{1}, false},
	{"unit_then_last", []int{2, 1, 3}, []int{1, 2}, true},
}

var _ = addReduceGradCases()

// Random normal inputs have no ties, so max and min are differentiable there.
func addReduceGradCases() bool {
	for _, name := range reduceNames {
		for i, a := range reduceAttrs {
			x := randn(uint64(30+i), a.shape...)
			addGradCases(name, gradCase{name: a.name, attrs: Attrs{Axes: a.axes, KeepDims: a.keep}, in: ins(x), wrt: []int{0}})
		}
	}
	return true
}

// naiveReduce groups x's elements by output element with plain index
// arithmetic and applies f to each group.
func naiveReduce(x *tensor.Tensor, axes []int, keep bool, f func([]float64) float64) *tensor.Tensor {
	shape := x.Shape()
	reduced := make([]bool, len(shape))
	for _, a := range axes {
		if a < 0 {
			a += len(shape)
		}
		reduced[a] = true
	}
	var outShape []int
	for i, d := range shape {
		switch {
		case len(axes) == 0 || reduced[i]:
			reduced[i] = true
			if keep {
				outShape = append(outShape, 1)
			}
		default:
			outShape = append(outShape, d)
		}
	}
	outSize := 1
	for i, d := range shape {
		if !reduced[i] {
			outSize *= d
		}
	}
	groups := make([][]float64, outSize)
	for flat := 0; flat < x.Size(); flat++ {
		// Unravel flat into a multi-index, then ravel the kept axes.
		rem, o, mul := flat, 0, 1
		for a := len(shape) - 1; a >= 0; a-- {
			idx := rem % shape[a]
			rem /= shape[a]
			if !reduced[a] {
				o += idx * mul
				mul *= shape[a]
			}
		}
		groups[o] = append(groups[o], x.At(flat))
	}
	out := tensor.Zeros(tensor.Float64, outShape...)
	for o, g := range groups {
		out.Float64s()[o] = f(g)
	}
	return out
}

var naiveReductions = map[string]func([]float64) float64{
	"sum": func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s
	},
	"mean": func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	},
	"max": func(v []float64) float64 {
		m := math.Inf(-1)
		for _, x := range v {
			if x > m {
				m = x
			}
		}
		return m
	},
	"min": func(v []float64) float64 {
		m := math.Inf(1)
		for _, x := range v {
			if x < m {
				m = x
			}
		}
		return m
	},
	"variance": func(v []float64) float64 {
		s, ss := 0.0, 0.0
		for _, x := range v {
			s += x
		}
		mean := s / float64(len(v))
		for _, x := range v {
			ss += (x - mean) * (x - mean)
		}
		return ss / float64(len(v))
	},
	"logsumexp": func(v []float64) float64 { // unshifted: inputs here are small
		s := 0.0
		for _, x := range v {
			s += math.Exp(x)
		}
		return math.Log(s)
	},
}

func TestReduceForwardMatchesNaive(t *testing.T) {
	for _, name := range reduceNames {
		for i, a := range reduceAttrs {
			t.Run(name+"/"+a.name, func(t *testing.T) {
				x := randn(uint64(50+i), a.shape...)
				got, err := ReduceOp(name, a.axes, a.keep).Forward(ins(x))
				require.NoError(t, err)
				requireClose(t, naiveReduce(x, a.axes, a.keep, naiveReductions[name]), got, 1e-12, 1e-12)
				checkDTypes(t, func() Op { return ReduceOp(name, a.axes, a.keep) }, x)
			})
		}
	}
}

func TestReduceSmallExamples(t *testing.T) {
	x := tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	got, err := Sum(x, []int{0}, false)
	require.NoError(t, err)
	require.Equal(t, []float64{5, 7, 9}, got.Float64s())
	got, err = Mean(x, []int{1}, true)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 1}, got.Shape())
	require.Equal(t, []float64{2, 5}, got.Float64s())
	got, err = Variance(x, nil, false)
	require.NoError(t, err)
	require.InDelta(t, 35.0/12, got.Float64s()[0], 1e-15) // values 1..6: mean 3.5, Σ(x-3.5)² = 17.5
	got, err = Max(x, []int{-1}, false)
	require.NoError(t, err)
	require.Equal(t, []float64{3, 6}, got.Float64s())
	got, err = Min(x, []int{0, 1}, true)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{1, 1}, got.Shape())
	require.Equal(t, []float64{1}, got.Float64s())
}

// A naive log(Σ exp(x)) overflows at 1000; the shifted form must not.
func TestLogSumExpIsStable(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x, err := tensor.MustFromSlice([]float64{1000, 1000, -1000, -1000}, 2, 2).Cast(dt)
		require.NoError(t, err)
		y, err := LogSumExp(x, []int{1}, false)
		require.NoError(t, err)
		require.InDelta(t, 1000+math.Ln2, y.At(0), 1e-3, dt.String())
		require.InDelta(t, -1000+math.Ln2, y.At(1), 1e-3, dt.String())
	}
	// An all -Inf row shifts by 0, as TF, and gives -Inf rather than NaN.
	y, err := LogSumExp(tensor.MustFromSlice([]float64{math.Inf(-1), math.Inf(-1)}, 2), nil, false)
	require.NoError(t, err)
	require.True(t, math.IsInf(y.At(0), -1))
}

// Tied extremes share the gradient equally (TF's reduce_max gradient).
func TestMaxMinSplitGradientAmongTies(t *testing.T) {
	x := tensor.MustFromSlice([]float64{1, 3, 3, 2, 2, 2, 0, 5, -1}, 3, 3)
	gout := tensor.MustFromSlice([]float64{1, 3, 2}, 3)
	cases := []struct {
		name string
		want []float64
	}{
		{"max", []float64{0, 0.5, 0.5, 1, 1, 1, 0, 2, 0}},
		{"min", []float64{1, 0, 0, 1, 1, 1, 0, 0, 2}},
	}
	for _, c := range cases {
		op := ReduceOp(c.name, []int{1}, false)
		y, err := op.Forward(ins(x))
		require.NoError(t, err)
		g, err := op.Backward(ins(x), y, gout, []bool{true})
		require.NoError(t, err)
		require.Equal(t, c.want, g[0].Float64s(), c.name)
	}
}

func TestReduceEmptyAxis(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 0, 3)
	want := map[string]float64{"sum": 0, "mean": math.NaN(), "max": math.Inf(-1), "min": math.Inf(1), "variance": math.NaN(), "logsumexp": math.Inf(-1)}
	for _, name := range reduceNames {
		op := ReduceOp(name, []int{0}, true)
		y, err := op.Forward(ins(x))
		require.NoError(t, err, name)
		require.Equal(t, tensor.Shape{1, 3}, y.Shape(), name)
		for i := range 3 {
			if math.IsNaN(want[name]) {
				require.True(t, math.IsNaN(y.At(i)), name)
			} else {
				require.Equal(t, want[name], y.At(i), name)
			}
		}
		g, err := op.Backward(ins(x), y, tensor.ZerosLike(y), []bool{true})
		require.NoError(t, err, name)
		require.Equal(t, tensor.Shape{0, 3}, g[0].Shape(), name)
	}
	// Reducing a non-empty axis of an empty tensor gives an empty output.
	y, err := Sum(x, []int{1}, false)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0}, y.Shape())
}

func TestReduceErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := Sum(x, []int{2}, false)
	require.ErrorContains(t, err, "sum: inputs float32[2 3]: axis 2 out of range for rank 2")
	_, err = Mean(x, []int{-3}, false)
	require.ErrorContains(t, err, "mean: inputs float32[2 3]: axis -3 out of range")
	_, err = Max(x, []int{1, -1}, false)
	require.ErrorContains(t, err, "max: inputs float32[2 3]: axis -1 repeated")
	_, err = Variance(tensor.Zeros(tensor.Int64, 2), nil, false)
	require.ErrorContains(t, err, "variance: inputs int64[2]: want float32 or float64")
	_, err = LogSumExp(nil, nil, false)
	require.ErrorContains(t, err, "logsumexp")
	// An unknown name is an error at Forward, not a panic (nor for the
	// other ops picked by name).
	for _, op := range []Op{ReduceOp("prod", nil, false), BinaryOp("mod"), UnaryOp("cosh")} {
		_, err := op.Forward([]*tensor.Tensor{x})
		require.ErrorContains(t, err, "ops: no ")
		require.ErrorContains(t, err, op.Name())
		_, err = op.Backward(nil, nil, nil, nil)
		require.Error(t, err)
	}
}

// Sums and means over trailing axes of long inputs take the vector and
// chunked path (sumRuns, fillRuns): one output of more than
// par.RowTaskElems elements, and many outputs, in both float types, match
// the naive float64 sums, their gradients fill each run with its output's
// gradient exactly, and the results are the same bits on 1 core and 4.
func TestReduceLongRunsOverCores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []int
		axes  []int
	}{
		{"all", []int{40003}, nil},
		{"all_2d", []int{7, 9001}, nil},
		{"last", []int{37, 1001}, []int{-1}},
		{"last_two", []int{5, 33, 101}, []int{1, 2}},
	} {
		for _, name := range []string{"sum", "mean"} {
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
				t.Run(tc.name+"/"+name+"/"+dt.String(), func(t *testing.T) {
					x := randn(71, tc.shape...)
					if dt == tensor.Float32 {
						x = f32(x)
					}
					run := func(procs int) (*tensor.Tensor, *tensor.Tensor) {
						defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
						op := ReduceOp(name, tc.axes, false)
						y, err := op.Forward(ins(x))
						require.NoError(t, err)
						g := tensor.Zeros(dt, y.Shape()...)
						for i := range g.Size() {
							g.SetAt(i, float64(i+1)/8)
						}
						grads, err := op.Backward(ins(x), y, g, []bool{true})
						require.NoError(t, err)
						return y, grads[0]
					}
					y1, g1 := run(1)
					y4, g4 := run(4)
					require.Equal(t, values(y1), values(y4), "forward, 1 core vs 4")
					require.Equal(t, values(g1), values(g4), "gradient, 1 core vs 4")
					want := naiveReduce(x, tc.axes, false, naiveReductions[name])
					tol := 1e-12
					if dt == tensor.Float32 {
						tol = 1e-5
					}
					requireClose(t, want, y4, tol, tol)
					n := x.Size() / max(y4.Size(), 1)
					gx := values(g4)
					for i, v := range gx {
						w := float64(i/n+1) / 8
						if name == "mean" {
							w /= float64(n)
						}
						if dt == tensor.Float32 {
							w = float64(float32(w))
						}
						require.Equal(t, w, v, "gradient element %d", i)
					}
				})
			}
		}
	}
}

// values returns t's elements as float64s.
func values(t *tensor.Tensor) []float64 {
	out := make([]float64, t.Size())
	for i := range out {
		out[i] = t.At(i)
	}
	return out
}
