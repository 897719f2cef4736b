package graph

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// sparseVsVar runs f once with a table parameter and once with the same
// table as a Var, back-propagating gout from f's result, and returns the
// parameter and the Var's dense gradient.
func sparseVsVar(t *testing.T, table *tensor.Tensor, f func(table *Value) *Value, gout *tensor.Tensor) (*Param, *tensor.Tensor) {
	t.Helper()
	p := NewParam("emb", table)
	tape := NewTape()
	require.NoError(t, tape.BackwardWith(f(tape.Param(p)), gout))
	tape = NewTape()
	v := tape.Var(table)
	require.NoError(t, tape.BackwardWith(f(v), gout))
	return p, v.Grad()
}

func TestEmbeddingParamGradIsSparse(t *testing.T) {
	table := randn(1, 9, 3)
	ids := tensor.MustFromSlice([]int64{7, 2, 7, 4, 2, 7}, 2, 3)
	gout := randn(2, 2, 3, 3)
	p, dense := sparseVsVar(t, table, func(x *Value) *Value { return Embedding(x, ids, 4) }, gout)
	require.Nil(t, p.Grad)
	require.Equal(t, []int{2, 7}, p.SparseGrad.Rows, "padding row 4 excluded, repeats once")
	require.Equal(t, tensor.Shape{2, 3}, p.SparseGrad.Values.Shape())
	g := gout.Float64s()
	for j := range 3 {
		require.Equal(t, g[1*3+j]+g[4*3+j], p.SparseGrad.Values.At(j), "row 2 sums ids 1 and 4")
		require.Equal(t, g[0*3+j]+g[2*3+j]+g[5*3+j], p.SparseGrad.Values.At(3+j), "row 7 sums ids 0, 2 and 5")
	}
	got, err := p.DenseGrad()
	require.NoError(t, err)
	require.Equal(t, dense.Float64s(), got.Float64s(), "bit-identical to the dense gradient")
}

// A table looked up twice on one tape merges both sparse gradients.
func TestEmbeddingParamTwiceSparse(t *testing.T) {
	table := randn(3, 8, 2)
	a := tensor.MustFromSlice([]int64{5, 1, 5}, 3)
	b := tensor.MustFromSlice([]int32{6, 5, 0}, 3)
	gout := randn(4, 3, 2)
	p, dense := sparseVsVar(t, table, func(x *Value) *Value {
		return Add(Embedding(x, a, ops.NoPadding), Mul(Embedding(x, b, ops.NoPadding), Embedding(x, a, ops.NoPadding)))
	}, gout)
	require.Nil(t, p.Grad)
	require.Equal(t, []int{0, 1, 5, 6}, p.SparseGrad.Rows)
	got, err := p.DenseGrad()
	require.NoError(t, err)
	require.Equal(t, dense.Float64s(), got.Float64s(), "sparse parts add in the order dense ones do")
}

// A table also used densely on the tape ends with a dense gradient that
// holds the sparse parts too.
func TestEmbeddingParamSparseAndDense(t *testing.T) {
	table := randn(5, 6, 2)
	ids := tensor.MustFromSlice([]int64{3, 0, 3}, 3)
	p, dense := sparseVsVar(t, table, func(x *Value) *Value {
		return Add(Sum(Embedding(x, ids, ops.NoPadding)), Sum(Mul(x, x)))
	}, tensor.Scalar(1.0))
	require.Nil(t, p.SparseGrad)
	require.NotNil(t, p.Grad)
	requireNear(t, dense, p.Grad, 1e-15)
	got, err := p.DenseGrad()
	require.NoError(t, err)
	require.Same(t, p.Grad, got, "a dense gradient is returned as it is")
}

// Sparse gradients merge across Backward calls; a dense one absorbs them;
// ZeroGrad clears either form and keeps the parameter's gradient form.
func TestParamSparseGradAccumulatesAndZeroes(t *testing.T) {
	table := randn(6, 5, 2)
	p := NewParam("emb", table)
	back := func(f func(x *Value) *Value) {
		tape := NewTape()
		require.NoError(t, tape.Backward(Sum(f(tape.Param(p)))))
	}
	lookup := func(ids ...int64) func(x *Value) *Value {
		return func(x *Value) *Value { return Embedding(x, tensor.MustFromSlice(ids, len(ids)), ops.NoPadding) }
	}
	back(lookup(3, 1))
	back(lookup(4, 3, 3))
	require.Nil(t, p.Grad)
	require.Equal(t, []int{1, 3, 4}, p.SparseGrad.Rows)
	require.Equal(t, []float64{1, 1, 3, 3, 1, 1}, p.SparseGrad.Values.Float64s())

	p.ZeroGrad()
	require.Nil(t, p.Grad)
	require.Empty(t, p.SparseGrad.Rows, "a zero sparse gradient has no rows")
	require.Equal(t, tensor.Shape{0, 2}, p.SparseGrad.Values.Shape())
	zero, err := p.DenseGrad()
	require.NoError(t, err)
	require.Equal(t, make([]float64, 10), zero.Float64s())

	back(lookup(2))
	back(func(x *Value) *Value { return x }) // a dense use
	require.Nil(t, p.SparseGrad)
	require.Equal(t, []float64{1, 1, 1, 1, 2, 2, 1, 1, 1, 1}, p.Grad.Float64s())
	back(lookup(0, 0))
	require.Nil(t, p.SparseGrad, "once dense, sparse gradients add into it")
	require.Equal(t, []float64{3, 3, 1, 1, 2, 2, 1, 1, 1, 1}, p.Grad.Float64s())
	p.ZeroGrad()
	require.Nil(t, p.SparseGrad)
	require.Equal(t, make([]float64, 10), p.Grad.Float64s())
}

// A lookup of 8 ids in a [100000, 16] table allocates nothing of the
// table's size in Backward.
func TestEmbeddingParamLargeTableNoDenseGrad(t *testing.T) {
	const v, d = 100000, 16
	p := NewParam("emb", tensor.Zeros(tensor.Float64, v, d))
	ids := tensor.MustFromSlice([]int64{99999, 5, 17, 5, 0, 40000, 17, 3}, 8)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tape := NewTape()
	require.NoError(t, tape.Backward(Sum(Embedding(tape.Param(p), ids, ops.NoPadding))))
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(v*d*8/10), "no [V, D] gradient")
	require.Nil(t, p.Grad)
	require.Equal(t, []int{0, 3, 5, 17, 40000, 99999}, p.SparseGrad.Rows)
}

func TestSparseRowsErrors(t *testing.T) {
	value := tensor.Zeros(tensor.Float32, 4, 2)
	vals := func(n int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, n, 2) }
	for _, c := range []struct {
		s    *SparseRows
		v    *tensor.Tensor
		want string
	}{
		{&SparseRows{Rows: []int{1}}, value, "graph: sparse gradient without values"},
		{&SparseRows{Rows: []int{1}, Values: vals(1)}, tensor.Scalar[float32](1), "graph: sparse gradient of a value without rows"},
		{&SparseRows{Rows: []int{1}, Values: vals(2)}, value, "graph: sparse gradient values float32[2 2] for 1 rows of a float32[4 2] value; want float32[1 2]"},
		{&SparseRows{Rows: []int{1}, Values: tensor.Zeros(tensor.Float64, 1, 2)}, value, "want float32[1 2]"},
		{&SparseRows{Rows: []int{2, 2}, Values: vals(2)}, value, "graph: sparse gradient row 2 at position 1: want unique ascending rows in [0, 4)"},
		{&SparseRows{Rows: []int{4}, Values: vals(1)}, value, "row 4 at position 0"},
		{&SparseRows{Rows: []int{-1}, Values: vals(1)}, value, "row -1 at position 0"},
	} {
		require.ErrorContains(t, c.s.Validate(c.v), c.want)
	}
	require.NoError(t, (&SparseRows{Rows: []int{0, 3}, Values: vals(2)}).Validate(value))

	p := NewParam("w", value)
	p.SparseGrad = &SparseRows{Rows: []int{9}, Values: vals(1)}
	_, err := p.DenseGrad()
	require.ErrorContains(t, err, `parameter "w": graph: sparse gradient row 9`)
	p.Grad = tensor.ZerosLike(value)
	_, err = p.DenseGrad()
	require.ErrorContains(t, err, `graph: parameter "w" has both a dense and a sparse gradient`)
	p.ZeroGrad()
	require.Nil(t, p.SparseGrad, "ZeroGrad leaves one form")
}
