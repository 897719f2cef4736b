package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("gather_elements",
	gradCase{name: "axis0_repeats", attrs: Attrs{Axis: 0}, in: ins(randn(1, 3, 4), tensor.MustFromSlice([]int64{2, 0, 2, 1, 2, 2, 0, 0}, 2, 4)), wrt: []int{0}},
	gradCase{name: "axis1_shorter", attrs: Attrs{Axis: 1}, in: ins(randn(2, 3, 4, 2), tensor.MustFromSlice([]int32{3, 0, -1, 1, 0, 0, 2, -4, 1, 1, 3, 2}, 2, 3, 2)), wrt: []int{0}},
	gradCase{name: "last_negative", attrs: Attrs{Axis: -1}, in: ins(randn(3, 2, 3), tensor.MustFromSlice([]int64{-1, 0, -3, 2, 2, 2, 1, -2}, 2, 4)), wrt: []int{0}},
)

// naiveGatherElements reads out[p] = data[p with p[axis] = indices[p]] by
// unravelling each output position.
func naiveGatherElements(data, indices *tensor.Tensor, axis int) *tensor.Tensor {
	ds, is := data.Shape(), indices.Shape()
	out := tensor.Zeros(tensor.Float64, is...)
	pos := make([]int, len(is))
	for o := range out.Size() {
		for d, rem := len(is)-1, o; d >= 0; d-- {
			pos[d], rem = rem%is[d], rem/is[d]
		}
		off := 0
		for d := range ds {
			p := pos[d]
			if d == axis {
				p = int(indices.At(o))
				if p < 0 {
					p += ds[d]
				}
			}
			off = off*ds[d] + p
		}
		out.Float64s()[o] = data.At(off)
	}
	return out
}

// randIndices returns an int64 tensor of shape with values in [-n, n).
func randIndices(seed uint64, n int, shape ...int) *tensor.Tensor {
	u := randu(seed, float64(-n), float64(n), shape...)
	v := make([]int64, u.Size())
	for i := range v {
		v[i] = int64(u.At(i)+float64(n)) - int64(n) // floor for negatives too
	}
	return tensor.MustFromSlice(v, shape...)
}

func TestGatherElementsMatchesNaive(t *testing.T) {
	for i, c := range []struct {
		data, idx []int
		axis      int
	}{
		{[]int{5}, []int{7}, 0},
		{[]int{3, 4}, []int{3, 4}, 1},
		{[]int{3, 4}, []int{6, 2}, 0},
		{[]int{2, 3, 5}, []int{2, 2, 9}, 2},
		{[]int{4, 3, 5, 2}, []int{3, 7, 5, 1}, -3},
		{[]int{4, 3}, []int{0, 3}, 1},
		{[]int{7, 1, 3}, []int{7, 4, 3}, 1},
	} {
		data := randn(uint64(i+1), c.data...)
		ax := c.axis
		if ax < 0 {
			ax += len(c.data)
		}
		idx := randIndices(uint64(i+100), c.data[ax], c.idx...)
		got, err := GatherElements(data, idx, c.axis)
		require.NoError(t, err, "case %d", i)
		requireClose(t, naiveGatherElements(data, idx, ax), got, 0, 0)
		checkDTypes(t, func() Op { return GatherElementsOp(GatherElementsAttrs{Axis: c.axis}) }, data, idx)
	}
}

func TestGatherElementsSmallExample(t *testing.T) {
	// ONNX's example: axis 1 of [[1, 2], [3, 4]] at [[0, 0], [1, 0]].
	data := tensor.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)
	got, err := GatherElements(data, tensor.MustFromSlice([]int64{0, 0, 1, 0}, 2, 2), 1)
	require.NoError(t, err)
	require.Equal(t, []float32{1, 1, 4, 3}, got.Float32s())
	// The gradient adds every read back: data[0][0] is read twice.
	op := GatherElementsOp(GatherElementsAttrs{Axis: 1})
	in := ins(data, tensor.MustFromSlice([]int64{0, 0, 1, 0}, 2, 2))
	out, err := op.Forward(in)
	require.NoError(t, err)
	g, err := op.Backward(in, out, tensor.MustFromSlice([]float32{1, 10, 100, 1000}, 2, 2), []bool{true, false})
	require.NoError(t, err)
	require.Equal(t, []float32{11, 0, 1000, 100}, g[0].Float32s())
	require.Nil(t, g[1])
}

func TestGatherElementsErrors(t *testing.T) {
	data := tensor.Zeros(tensor.Float32, 4, 3)
	for _, c := range []struct {
		data, idx *tensor.Tensor
		axis      int
		want      string
	}{
		{data, tensor.MustFromSlice([]int64{1, 4, 0}, 1, 3), 0, "gather_elements: inputs float32[4 3], int64[1 3]: index 4 out of range [-4, 4) on axis 0"},
		{data, tensor.MustFromSlice([]int32{-4}, 1, 1), 1, "gather_elements: inputs float32[4 3], int32[1 1]: index -4 out of range [-3, 3) on axis 1"},
		{data, tensor.Zeros(tensor.Int64, 5, 3), 1, "gather_elements: inputs float32[4 3], int64[5 3]: indices axis 0 has size 5, more than data's 4 (only axis 1 may be longer)"},
		{data, tensor.Zeros(tensor.Int64, 3), 0, "gather_elements: inputs float32[4 3], int64[3]: want data of rank >= 1 and indices of the same rank"},
		{data, tensor.Zeros(tensor.Float32, 1, 1), 0, "gather_elements: inputs float32[4 3], float32[1 1]: want int32 or int64 indices"},
		{tensor.Zeros(tensor.Int64, 2), tensor.Zeros(tensor.Int64, 2), 0, "want float32 or float64 data"},
		{data, tensor.Zeros(tensor.Int64, 1, 1), 2, "gather_elements: inputs float32[4 3], int64[1 1]: axis 2 out of range for rank 2"},
		{data, nil, 0, "gather_elements"},
	} {
		_, err := GatherElements(c.data, c.idx, c.axis)
		require.ErrorContains(t, err, c.want)
	}
}
