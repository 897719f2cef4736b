package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("gather",
	gradCase{name: "axis0_repeats", attrs: Attrs{Axis: 0}, in: ins(randn(1, 4, 3), tensor.MustFromSlice([]int64{2, 0, 2, 3, 2}, 5)), wrt: []int{0}},
	gradCase{name: "axis1_int32", attrs: Attrs{Axis: 1}, in: ins(randn(2, 2, 5, 3), tensor.MustFromSlice([]int32{4, 1, 1}, 3)), wrt: []int{0}},
	gradCase{name: "last_rank2_indices", attrs: Attrs{Axis: -1}, in: ins(randn(3, 3, 4), tensor.MustFromSlice([]int64{0, 3, 3, 1, 2, 0}, 2, 3)), wrt: []int{0}},
	gradCase{name: "negative", attrs: Attrs{Axis: 1}, in: ins(randn(5, 2, 3, 2), tensor.MustFromSlice([]int64{-1, 0, -3, 2, -1}, 5)), wrt: []int{0}},
	gradCase{name: "scalar_index", attrs: Attrs{Axis: 0}, in: ins(randn(4, 3, 2), tensor.Scalar[int64](1)), wrt: []int{0}},
)

// sliceGather is an independent gather: concatenate params' one-wide slices
// at each index, then split the gathered axis into indices' shape.
func sliceGather(t *testing.T, params, indices *tensor.Tensor, axis int) *tensor.Tensor {
	idx, err := indices.Ints()
	require.NoError(t, err)
	parts := make([]*tensor.Tensor, len(idx))
	for j, i := range idx {
		parts[j], err = params.Slice(axis, i, i+1)
		require.NoError(t, err)
	}
	cat, err := tensor.Concat(axis, parts...)
	require.NoError(t, err)
	s := params.Shape()
	shape := append(append(s[:axis].Clone(), indices.Shape()...), s[axis+1:]...)
	out, err := cat.Reshape(shape...)
	require.NoError(t, err)
	return out
}

func TestGatherMatchesSlices(t *testing.T) {
	params := randn(5, 3, 4, 5)
	for _, c := range []struct {
		axis    int
		indices *tensor.Tensor
	}{
		{0, tensor.MustFromSlice([]int64{2, 0, 2}, 3)},
		{1, tensor.MustFromSlice([]int32{3, 1, 0, 3}, 2, 2)},
		{2, tensor.MustFromSlice([]int64{4}, 1)},
	} {
		got, err := Gather(params, c.indices, c.axis)
		require.NoError(t, err)
		requireClose(t, sliceGather(t, params, c.indices, c.axis), got, 0, 0)
		neg, err := Gather(params, c.indices, c.axis-3)
		require.NoError(t, err)
		requireClose(t, got, neg, 0, 0)
		checkDTypes(t, func() Op { return GatherOp(c.axis) }, params, c.indices)
	}
}

func TestGatherNegativeIndicesCountFromTheEnd(t *testing.T) {
	params := randn(6, 2, 5, 3)
	neg := tensor.MustFromSlice([]int64{-1, -5, 2, -2, 0, -1}, 2, 3)
	pos := tensor.MustFromSlice([]int64{4, 0, 2, 3, 0, 4}, 2, 3)
	got, err := Gather(params, neg, 1)
	require.NoError(t, err)
	requireClose(t, sliceGather(t, params, pos, 1), got, 0, 0)
}

func TestGatherSmallExample(t *testing.T) {
	params := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	got, err := Gather(params, tensor.MustFromSlice([]int64{2, 0}, 2), 0)
	require.NoError(t, err)
	require.Equal(t, []float32{5, 6, 1, 2}, got.Float32s())
	// No indices: an empty output of the right shape.
	got, err = Gather(params, tensor.Zeros(tensor.Int64, 0), 1)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{3, 0}, got.Shape())
}

func TestGatherErrors(t *testing.T) {
	params := tensor.Zeros(tensor.Float32, 4, 3)
	_, err := Gather(params, tensor.MustFromSlice([]int64{1, 7}, 2), 0)
	require.ErrorContains(t, err, "gather: inputs float32[4 3], int64[2]: index 7 out of range [-4, 4) on axis 0")
	_, err = Gather(params, tensor.MustFromSlice([]int32{-4}, 1), 1)
	require.ErrorContains(t, err, "gather: inputs float32[4 3], int32[1]: index -4 out of range [-3, 3) on axis 1")
	_, err = Gather(params, tensor.MustFromSlice([]float32{1}, 1), 0)
	require.ErrorContains(t, err, "gather: inputs float32[4 3], float32[1]: want int32 or int64 indices")
	_, err = Gather(tensor.Zeros(tensor.Int64, 4), tensor.MustFromSlice([]int64{1}, 1), 0)
	require.ErrorContains(t, err, "want float32 or float64 params")
	_, err = Gather(params, tensor.MustFromSlice([]int64{1}, 1), 2)
	require.ErrorContains(t, err, "gather: inputs float32[4 3], int64[1]: axis 2 out of range for rank 2")
	_, err = Gather(params, nil, 0)
	require.ErrorContains(t, err, "gather")
}
