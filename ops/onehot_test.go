package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func TestOneHot(t *testing.T) {
	got, err := OneHot(tensor.MustFromSlice([]int64{2, 0, 1, 2}, 2, 2), 3, tensor.Float32)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 2, 3}, got.Shape())
	require.Equal(t, []float32{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}, got.Float32s())

	got, err = OneHot(tensor.MustFromSlice([]int32{1}, 1), 2, tensor.Int64)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 1}, got.Int64s())

	got, err = OneHot(tensor.Zeros(tensor.Int32, 0), 4, tensor.Float64)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0, 4}, got.Shape())
}

func TestOneHotErrors(t *testing.T) {
	_, err := OneHot(tensor.MustFromSlice([]int64{0, 3}, 2), 3, tensor.Float32)
	require.ErrorContains(t, err, "one_hot: inputs int64[2]: label 3 at position 1 out of range [0, 3)")
	_, err = OneHot(tensor.MustFromSlice([]int32{-1}, 1), 3, tensor.Float32)
	require.ErrorContains(t, err, "label -1 at position 0")
	_, err = OneHot(tensor.MustFromSlice([]float32{0}, 1), 3, tensor.Float32)
	require.ErrorContains(t, err, "one_hot: inputs float32[1]: want int32 or int64 indices")
	_, err = OneHot(tensor.MustFromSlice([]int64{0}, 1), -1, tensor.Float32)
	require.ErrorContains(t, err, "negative depth")
	_, err = OneHot(tensor.MustFromSlice([]int64{0}, 1), 2, tensor.DType(0))
	require.ErrorContains(t, err, "invalid dtype")
	_, err = OneHot(nil, 2, tensor.Float32)
	require.ErrorContains(t, err, "one_hot")
}
