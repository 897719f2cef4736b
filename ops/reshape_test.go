package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("reshape",
	gradCase{name: "infer", attrs: Attrs{Shape: []int{6, -1}}, in: ins(randn(1, 2, 3, 4)), wrt: []int{0}},
	gradCase{name: "to_scalar", attrs: Attrs{}, in: ins(randn(2, 1, 1)), wrt: []int{0}},
	gradCase{name: "split", attrs: Attrs{Shape: []int{2, -1, 3}}, in: ins(randn(3, 12)), wrt: []int{0}},
)

func TestReshape(t *testing.T) {
	x := randn(1, 2, 3, 4)
	got, err := Reshape(x, -1, 4, 2)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{3, 4, 2}, got.Shape())
	require.Equal(t, x.Float64s(), got.Float64s(), "same elements in the same order")
	checkDTypes(t, func() Op { return ReshapeOp(4, 6) }, x)

	labels, err := Reshape(tensor.MustFromSlice([]int64{1, 2, 3, 4}, 4), 2, 2)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 2}, labels.Shape())

	empty, err := Reshape(tensor.Zeros(tensor.Float32, 0, 3), 3, 0)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{3, 0}, empty.Shape())
}

func TestReshapeErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := Reshape(x, 4)
	require.ErrorContains(t, err, "reshape: inputs float32[2 3]: tensor: reshape [2 3] (6 elements) to [4] (4 elements)")
	_, err = Reshape(x, -1, -1)
	require.ErrorContains(t, err, "reshape: inputs float32[2 3]")
	_, err = Reshape(x, 4, -1)
	require.ErrorContains(t, err, "cannot infer -1")
	_, err = Reshape(nil, 1)
	require.ErrorContains(t, err, "reshape")
}
