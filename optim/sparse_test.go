package optim

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// sparseStep is one step's gradient of a [v, d] table: rows and values.
type sparseStep struct {
	rows []int
	vals []float64
}

// randomSteps draws n steps of sparse gradients of a [v, d] table, the
// last one with no rows (a zeroed sparse gradient).
func randomSteps(rng *rand.Rand, n, v, d int) []sparseStep {
	steps := make([]sparseStep, n)
	for i := range n - 1 {
		var rows []int
		for r := range v {
			if rng.IntN(3) == 0 {
				rows = append(rows, r)
			}
		}
		vals := make([]float64, len(rows)*d)
		for j := range vals {
			vals[j] = rng.NormFloat64()
		}
		steps[i] = sparseStep{rows, vals}
	}
	return steps
}

func asTensor[T tensor.Float](vals []float64, shape ...int) *tensor.Tensor {
	d := make([]T, len(vals))
	for i, v := range vals {
		d[i] = T(v)
	}
	return tensor.MustFromSlice(d, shape...)
}

// setGrad gives p step s's gradient, sparse or as the equivalent dense one.
func setGrad[T tensor.Float](p *graph.Param, s sparseStep, sparse bool) {
	d := p.Value.Dim(1)
	if sparse {
		p.Grad = nil
		p.SparseGrad = &graph.SparseRows{Rows: slices.Clone(s.rows), Values: asTensor[T](s.vals, len(s.rows), d)}
		return
	}
	dense := make([]float64, p.Value.Size())
	for k, r := range s.rows {
		copy(dense[r*d:(r+1)*d], s.vals[k*d:(k+1)*d])
	}
	p.SparseGrad = nil
	p.Grad = asTensor[T](dense, p.Value.Shape()...)
}

// For every rule, steps with sparse gradients give exactly the parameters
// and state of the same steps with the equivalent dense gradients.
func TestSparseStepMatchesDense(t *testing.T) {
	cases := []struct {
		name string
		opt  newFunc
		opts []Option
	}{
		{"SGD", NewSGD, []Option{LR(0.1)}},
		{"SGD_L2", NewSGD, []Option{LR(0.1), L2(0.01)}},
		{"SGD_clip", NewSGD, []Option{LR(0.1), GlobalClipNorm(1)}},
		{"Momentum", NewMomentum, []Option{LR(0.1)}},
		{"Nesterov", NewMomentum, []Option{LR(0.1), Nesterov()}},
		{"Adam", NewAdam, []Option{LR(0.01)}},
		{"AdamW", NewAdamW, []Option{LR(0.01)}},
		{"RMSProp", NewRMSProp, []Option{LR(0.01)}},
		{"RMSProp_centered_momentum", NewRMSProp, []Option{LR(0.01), Centered(), Momentum(0.5)}},
		{"Adagrad", NewAdagrad, []Option{LR(0.1)}},
		{"Adagrad_clip", NewAdagrad, []Option{LR(0.1), GlobalClipNorm(0.5)}},
		{"Adagrad_eps0", NewAdagrad, []Option{LR(0.1), Epsilon(0), InitialAccumulator(0)}},
	}
	for _, c := range cases {
		t.Run(c.name+"/float64", func(t *testing.T) { sparseMatchesDense[float64](t, c.opt, c.opts) })
		t.Run(c.name+"/float32", func(t *testing.T) { sparseMatchesDense[float32](t, c.opt, c.opts) })
	}
}

func sparseMatchesDense[T tensor.Float](t *testing.T, newOpt newFunc, opts []Option) {
	const v, d = 7, 3
	rng := rand.New(rand.NewPCG(1, 2))
	init := make([]float64, v*d)
	for i := range init {
		init[i] = rng.NormFloat64()
	}
	steps := randomSteps(rng, 5, v, d)
	run := func(sparse bool) (*graph.Param, *graph.Param, Optimizer) {
		table := graph.NewParam("table", asTensor[T](init, v, d))
		other := graph.NewParam("other", asTensor[T]([]float64{1, -2}, 2)) // dense, for clipping across both
		opt, err := newOpt([]*graph.Param{table, other}, opts...)
		require.NoError(t, err)
		for _, s := range steps {
			setGrad[T](table, s, sparse)
			other.Grad = asTensor[T]([]float64{0.3, -0.1}, 2)
			require.NoError(t, opt.Step())
		}
		return table, other, opt
	}
	st, so, sopt := run(true)
	dt, do, dopt := run(false)
	requireSame(t, dt.Value, st.Value, "table")
	requireSame(t, do.Value, so.Value, "other")
	for i, s := range sopt.State() {
		requireSame(t, dopt.State()[i].Value, s.Value, s.Name)
	}
	g, err := st.DenseGrad()
	require.NoError(t, err)
	assert.Equal(t, make([]float64, v*d), values(g), "Step zeroed the gradient")
}

// requireSame requires got to equal want element for element, exactly,
// with NaN equal to NaN (Adagrad with epsilon 0 divides 0 by 0).
func requireSame(t *testing.T, want, got *tensor.Tensor, what string) {
	t.Helper()
	w, g := values(want), values(got)
	require.Len(t, g, len(w), what)
	for i := range w {
		if w[i] != g[i] && !(math.IsNaN(w[i]) && math.IsNaN(g[i])) {
			t.Fatalf("%s: element %d: want %v, got %v", what, i, w[i], g[i])
		}
	}
}

// SGD and Adagrad change only the gradient's rows, bit for bit elsewhere,
// and neither Backward nor Step allocates a gradient of the table's size.
func TestSparseStepTouchesOnlyRows(t *testing.T) {
	const v, d = 100000, 16
	for _, c := range []struct {
		name string
		opt  newFunc
	}{{"SGD", NewSGD}, {"Adagrad", NewAdagrad}} {
		t.Run(c.name, func(t *testing.T) {
			table, err := tensor.RandUniform(tensor.NewRNG(3), tensor.Float32, -1, 1, v, d)
			require.NoError(t, err)
			p := graph.NewParam("emb", table)
			opt, err := c.opt([]*graph.Param{p}, LR(0.5))
			require.NoError(t, err)
			before := table.Clone()
			ids := tensor.MustFromSlice([]int64{99999, 5, 17, 5, 0, 40000, 17, 3}, 8)
			touched := []int{0, 3, 5, 17, 40000, 99999}

			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			tape := graph.NewTape()
			require.NoError(t, tape.Backward(graph.Sum(graph.Embedding(tape.Param(p), ids, 3))))
			require.NoError(t, opt.Step())
			runtime.ReadMemStats(&m1)
			assert.Less(t, m1.TotalAlloc-m0.TotalAlloc, uint64(v*d*4/10), "no [V, D] tensor allocated")

			require.True(t, p.Grad == nil, "no dense gradient") // not require.Nil: it would print the table
			require.Empty(t, p.SparseGrad.Rows, "Step cleared the sparse gradient")
			now, was := table.Float32s(), before.Float32s()
			for r := range v {
				changed := !slices.Equal(now[r*d:(r+1)*d], was[r*d:(r+1)*d])
				// Row 3 is the padding index: looked up, but no gradient.
				want := slices.Contains(touched, r) && r != 3
				if changed != want {
					t.Fatalf("row %d changed=%v, want %v", r, changed, want)
				}
			}
			for _, s := range opt.State()[:len(opt.State())-1] {
				acc := s.Value.Float32s()
				for r := range v {
					if !slices.Contains(touched, r) || r == 3 {
						require.Equal(t, float32(0.1), acc[r*d], "untouched accumulator row %d", r)
					}
				}
			}
		})
	}
}

func TestSparseGradErrors(t *testing.T) {
	p := param[float64]("w", 1, 2, 3, 4)
	p.Value, _ = p.Value.Reshape(2, 2)
	opt, err := NewSGD([]*graph.Param{p})
	require.NoError(t, err)
	p.SparseGrad = &graph.SparseRows{Rows: []int{2}, Values: tensor.Zeros(tensor.Float64, 1, 2)}
	require.ErrorContains(t, opt.Step(), `optim: SGD: parameter "w": graph: sparse gradient row 2 at position 0`)
	p.SparseGrad.Rows[0] = 1
	p.Grad = tensor.Zeros(tensor.Float64, 2, 2)
	require.ErrorContains(t, opt.Step(), `optim: SGD: parameter "w" has both a dense and a sparse gradient`)
	_, err = ClipGlobalNorm([]*graph.Param{p}, 1)
	require.ErrorContains(t, err, `optim: ClipGlobalNorm: parameter "w" has both a dense and a sparse gradient`)
	p.Grad = nil
	p.SparseGrad.Values = tensor.Zeros(tensor.Float32, 1, 2)
	_, err = ClipGlobalNorm([]*graph.Param{p}, 1)
	require.ErrorContains(t, err, `optim: ClipGlobalNorm: parameter "w": graph: sparse gradient values float32[1 2]`)
	assert.Equal(t, []float64{1, 2, 3, 4}, p.Value.Float64s(), "nothing was updated")
}

// ClipGlobalNorm counts a sparse gradient as its dense form, and a
// non-finite norm makes every element of it NaN, as the dense one's.
func TestClipGlobalNormSparse(t *testing.T) {
	p := param[float64]("w", 0, 0, 0, 0, 0, 0)
	p.Value, _ = p.Value.Reshape(3, 2)
	p.SparseGrad = &graph.SparseRows{Rows: []int{0, 2}, Values: tensor.MustFromSlice([]float64{3, 0, 0, 4}, 2, 2)}
	norm, err := ClipGlobalNorm([]*graph.Param{p}, 1)
	require.NoError(t, err)
	assert.Equal(t, 5.0, norm)
	assert.InDeltaSlice(t, []float64{0.6, 0, 0, 0.8}, p.SparseGrad.Values.Float64s(), 1e-15)

	p.SparseGrad.Values.SetAt(1, math.Inf(1))
	norm, err = ClipGlobalNorm([]*graph.Param{p}, 1)
	require.NoError(t, err)
	assert.True(t, math.IsInf(norm, 1))
	require.Nil(t, p.SparseGrad)
	for _, g := range p.Grad.Float64s() {
		assert.True(t, math.IsNaN(g))
	}
}
