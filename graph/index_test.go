package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// An embedding lookup: rows 2, 0, 2 of a table; row 2's gradient sums twice.
func TestGatherBackpropagatesIntoParams(t *testing.T) {
	tape := NewTape()
	table := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	ids := tensor.MustFromSlice([]int64{2, 0, 2}, 3)
	rows := Gather(table, ids, 0)
	got, err := rows.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{5, 6, 1, 2, 5, 6}, got.Float64s())
	require.NoError(t, tape.Backward(Sum(rows)))
	require.Equal(t, []float64{1, 1, 0, 0, 2, 2}, table.Grad().Float64s())

	_, err = Gather(table, tensor.MustFromSlice([]int64{3}, 1), 0).Tensor()
	require.ErrorContains(t, err, "gather: inputs float64[3 2], int64[1]: index 3 out of range")
	require.ErrorContains(t, Gather(table, nil, 0).Err(), "gather: nil tensor input")
}

func TestWhereRoutesGradient(t *testing.T) {
	tape := NewTape()
	cond := tape.Const(tensor.MustFromSlice([]int32{1, 0, 1}, 3))
	a := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3}, 3))
	b := tape.Var(tensor.Scalar(10.0))
	y := Where(cond, a, b)
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{1, 10, 3}, got.Float64s())
	require.NoError(t, tape.Backward(Sum(Mul(y, y))))
	require.Equal(t, []float64{2, 0, 6}, a.Grad().Float64s())
	require.Equal(t, []float64{20}, b.Grad().Float64s())
}

func TestGatherElementsBackpropagatesIntoData(t *testing.T) {
	tape := NewTape()
	data := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2))
	y := GatherElements(data, tensor.MustFromSlice([]int64{-1, 0, 1, 1}, 2, 2), 1)
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{2, 1, 4, 4}, got.Float64s())
	require.NoError(t, tape.Backward(Sum(y)))
	require.Equal(t, []float64{1, 1, 0, 2}, data.Grad().Float64s())
	require.ErrorContains(t, GatherElements(data, nil, 0).Err(), "gather_elements: nil tensor input")
}

func TestScatterNDRoutesGradient(t *testing.T) {
	for _, c := range []struct {
		r       ops.ScatterReduction
		out, gd []float64
	}{
		{ops.ScatterNone, []float64{1, 2, 10, 20}, []float64{1, 1, 0, 0}},
		{ops.ScatterAdd, []float64{1, 2, 13, 24}, []float64{1, 1, 1, 1}},
	} {
		tape := NewTape()
		data := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2))
		upd := tape.Var(tensor.MustFromSlice([]float64{10, 20}, 1, 2))
		y := ScatterND(data, tensor.MustFromSlice([]int64{1}, 1, 1), upd, c.r)
		got, err := y.Tensor()
		require.NoError(t, err)
		require.Equal(t, c.out, got.Float64s(), c.r.String())
		require.NoError(t, tape.Backward(Sum(y)))
		require.Equal(t, c.gd, data.Grad().Float64s(), c.r.String())
		require.Equal(t, []float64{1, 1}, upd.Grad().Float64s(), c.r.String())
	}
}
