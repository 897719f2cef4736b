package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("concat",
	gradCase{name: "axis1_three", attrs: Attrs{Axis: 1}, in: ins(randn(1, 2, 1, 3), randn(2, 2, 4, 3), randn(3, 2, 2, 3)), wrt: []int{0, 1, 2}},
	gradCase{name: "axis0", attrs: Attrs{Axis: 0}, in: ins(randn(4, 3, 2), randn(5, 1, 2)), wrt: []int{0, 1}},
	gradCase{name: "last_one_wanted", attrs: Attrs{Axis: -1}, in: ins(randn(6, 2, 2), randn(7, 2, 3)), wrt: []int{1}},
	gradCase{name: "single", attrs: Attrs{Axis: 0}, in: ins(randn(8, 3)), wrt: []int{0}},
)

func TestConcat(t *testing.T) {
	a := tensor.MustFromSlice([]float64{1, 2, 3, 4}, 2, 2)
	b := tensor.MustFromSlice([]float64{5, 6}, 2, 1)
	got, err := Concat(1, a, b)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 3}, got.Shape())
	require.Equal(t, []float64{1, 2, 5, 3, 4, 6}, got.Float64s())
	checkDTypes(t, func() Op { return ConcatOp(-1) }, a, b)

	// An empty piece contributes nothing and gets an empty gradient.
	e := tensor.Zeros(tensor.Float64, 2, 0)
	op := ConcatOp(1)
	got, err = op.Forward(ins(a, e))
	require.NoError(t, err)
	require.Equal(t, a.Float64s(), got.Float64s())
	g, err := op.Backward(ins(a, e), got, got, []bool{true, true})
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 0}, g[1].Shape())
	g, err = op.Backward(ins(a, e), got, got, []bool{false, true})
	require.NoError(t, err)
	require.Nil(t, g[0], "an unwanted gradient is not computed")
}

func TestConcatErrors(t *testing.T) {
	_, err := Concat(0)
	require.ErrorContains(t, err, "concat: want at least one input")
	_, err = Concat(1, tensor.Zeros(tensor.Float32, 2, 2), tensor.Zeros(tensor.Float32, 3, 2))
	require.ErrorContains(t, err, "concat: inputs float32[2 2], float32[3 2]: tensor: concat along axis 1 of [2 2] and [3 2]: other dims differ")
	_, err = Concat(0, tensor.Zeros(tensor.Float32, 2), tensor.Zeros(tensor.Float64, 2))
	require.ErrorContains(t, err, "concat: inputs float32[2], float64[2]")
	_, err = Concat(2, tensor.Zeros(tensor.Float32, 2, 2))
	require.ErrorContains(t, err, "axis 2 out of range")
	_, err = Concat(0, tensor.Zeros(tensor.Float32, 2), nil)
	require.ErrorContains(t, err, "concat: inputs float32[2], nil: nil input")
}
