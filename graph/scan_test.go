package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

func TestCumSumBackpropagatesReversed(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	y := CumSum(x, ops.CumSumAttrs{Axis: 1, Exclusive: true})
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{0, 1, 3, 0, 4, 9}, got.Float64s())
	require.NoError(t, tape.Backward(Sum(y)))
	// Element j feeds the exclusive sums after it: 2, 1 and 0 of them.
	require.Equal(t, []float64{2, 1, 0, 2, 1, 0}, x.Grad().Float64s())
	require.ErrorContains(t, CumSum(x, ops.CumSumAttrs{Axis: 2}).Err(), "axis 2 out of range")
}

func TestGatherNDBackpropagatesIntoData(t *testing.T) {
	tape := NewTape()
	data := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2))
	y := GatherND(data, tensor.MustFromSlice([]int64{2, -1, 0}, 3, 1), 0)
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{5, 6, 5, 6, 1, 2}, got.Float64s())
	require.NoError(t, tape.Backward(Sum(y)))
	require.Equal(t, []float64{1, 1, 0, 0, 2, 2}, data.Grad().Float64s())
	require.ErrorContains(t, GatherND(data, nil, 0).Err(), "gather_nd: nil tensor input")
}
