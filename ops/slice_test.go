package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("slice",
	gradCase{name: "middle", attrs: Attrs{Axis: 1, Begin: 1, End: 3}, in: ins(randn(1, 2, 4, 3)), wrt: []int{0}},
	gradCase{name: "head", attrs: Attrs{Axis: 0, Begin: 0, End: 2}, in: ins(randn(2, 5, 2)), wrt: []int{0}},
	gradCase{name: "tail_last", attrs: Attrs{Axis: -1, Begin: 2, End: 5}, in: ins(randn(3, 3, 5)), wrt: []int{0}},
	gradCase{name: "whole", attrs: Attrs{Axis: 0, Begin: 0, End: 4}, in: ins(randn(4, 4)), wrt: []int{0}},
)

func TestSlice(t *testing.T) {
	x := tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)
	op := SliceOp(1, 1, 3)
	got, err := op.Forward(ins(x))
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 2}, got.Shape())
	require.Equal(t, []float64{2, 3, 6, 7}, got.Float64s())
	g, err := op.Backward(ins(x), got, tensor.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2), []bool{true})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 1, 2, 0, 0, 3, 4, 0}, g[0].Float64s())
	checkDTypes(t, func() Op { return SliceOp(0, 1, 2) }, x)

	// from == to is an empty slice whose gradient is all zeros.
	op = SliceOp(0, 1, 1)
	got, err = op.Forward(ins(x))
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0, 4}, got.Shape())
	g, err = op.Backward(ins(x), got, got, []bool{true})
	require.NoError(t, err)
	require.Equal(t, make([]float64, 8), g[0].Float64s())
}

func TestSliceErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := Slice(x, 1, 2, 4)
	require.ErrorContains(t, err, "slice: inputs float32[2 3]: tensor: slice [2,4) of axis 1 of shape [2 3]")
	_, err = Slice(x, 0, 2, 1)
	require.ErrorContains(t, err, "slice: inputs float32[2 3]")
	_, err = Slice(x, 2, 0, 1)
	require.ErrorContains(t, err, "axis 2 out of range for rank 2")
	_, err = Slice(nil, 0, 0, 1)
	require.ErrorContains(t, err, "slice")
}
