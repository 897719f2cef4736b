package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("gather_nd",
	gradCase{name: "rows_repeats", attrs: Attrs{BatchDims: 0}, in: ins(randn(1, 4, 3), tensor.MustFromSlice([]int64{2, 0, 2, -1}, 4, 1)), wrt: []int{0}},
	gradCase{name: "elements", attrs: Attrs{BatchDims: 0}, in: ins(randn(2, 3, 2, 2), tensor.MustFromSlice([]int32{1, 1, 0, -3, 1, 1, 0, 0, 1}, 3, 3)), wrt: []int{0}},
	gradCase{name: "batch1", attrs: Attrs{BatchDims: 1}, in: ins(randn(3, 2, 4, 3), tensor.MustFromSlice([]int64{3, 0, 3, 1, -1, 2}, 2, 3, 1)), wrt: []int{0}},
)

// naiveGatherND reads each output element by unravelling its position
// into batch coordinates, an indices row and the position within the slice.
func naiveGatherND(data, indices *tensor.Tensor, b int) *tensor.Tensor {
	ds, is := data.Shape(), indices.Shape()
	k := is[len(is)-1]
	outShape := append(is[:len(is)-1].Clone(), ds[b+k:]...)
	out := tensor.Zeros(tensor.Float64, outShape...)
	pos := make([]int, len(outShape))
	q := len(is) - 1 // output dims from indices
	for o := range out.Size() {
		for d, rem := len(outShape)-1, o; d >= 0; d-- {
			pos[d], rem = rem%outShape[d], rem/outShape[d]
		}
		row := 0
		for d := 0; d < q; d++ {
			row = row*is[d] + pos[d]
		}
		coord := make([]int, len(ds))
		copy(coord, pos[:b])
		for j := 0; j < k; j++ {
			v := int(indices.At(row*k + j))
			if v < 0 {
				v += ds[b+j]
			}
			coord[b+j] = v
		}
		copy(coord[b+k:], pos[q:])
		off := 0
		for d := range ds {
			off = off*ds[d] + coord[d]
		}
		out.Float64s()[o] = data.At(off)
	}
	return out
}

func TestGatherNDMatchesNaive(t *testing.T) {
	for i, c := range []struct {
		data []int
		idx  []int // indices' shape; its last dim is k
		b    int
	}{
		{[]int{7}, []int{5, 1}, 0},
		{[]int{3, 4}, []int{2, 2}, 0},
		{[]int{3, 4, 5}, []int{2, 3, 1}, 0},
		{[]int{2, 3, 5}, []int{4, 3}, 0},
		{[]int{2, 3, 5}, []int{2, 4, 1}, 1},
		{[]int{2, 3, 5, 3}, []int{2, 3, 2, 2}, 2},
		{[]int{3, 5, 2}, []int{3, 2}, 1},
		{[]int{4, 3}, []int{0, 2}, 0},
	} {
		data := randn(uint64(i+1), c.data...)
		k := c.idx[len(c.idx)-1]
		v := make([]int64, tensor.Shape(c.idx).Size())
		for j := range v {
			n := c.data[c.b+j%k]
			v[j] = randIndices(uint64(100*i+j), n, 1).Int64s()[0]
		}
		idx := tensor.MustFromSlice(v, c.idx...)
		got, err := GatherND(data, idx, c.b)
		require.NoError(t, err, "case %d", i)
		requireClose(t, naiveGatherND(data, idx, c.b), got, 0, 0)
		checkDTypes(t, func() Op { return GatherNDOp(GatherNDAttrs{BatchDims: c.b}) }, data, idx)
	}
}

func TestGatherNDSmallExample(t *testing.T) {
	// ONNX GatherND's example 5: batch_dims 1.
	data := tensor.MustFromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7}, 2, 2, 2)
	got, err := GatherND(data, tensor.MustFromSlice([]int64{1, 0}, 2, 1), 1)
	require.NoError(t, err)
	require.Equal(t, []int{2, 2}, []int(got.Shape()))
	require.Equal(t, []float32{2, 3, 4, 5}, got.Float32s())
	// The gradient adds repeated reads: row 1 is read twice.
	op := GatherNDOp(GatherNDAttrs{})
	in := ins(tensor.MustFromSlice([]float32{1, 2, 3, 4}, 2, 2), tensor.MustFromSlice([]int64{1, -1}, 2, 1))
	out, err := op.Forward(in)
	require.NoError(t, err)
	require.Equal(t, []float32{3, 4, 3, 4}, out.Float32s())
	g, err := op.Backward(in, out, tensor.MustFromSlice([]float32{1, 10, 100, 1000}, 2, 2), []bool{true, false})
	require.NoError(t, err)
	require.Equal(t, []float32{0, 0, 101, 1010}, g[0].Float32s())
	require.Nil(t, g[1])
}

func TestGatherNDErrors(t *testing.T) {
	data := tensor.Zeros(tensor.Float32, 4, 3)
	for _, c := range []struct {
		data, idx *tensor.Tensor
		b         int
		want      string
	}{
		{data, tensor.MustFromSlice([]int64{1, 4}, 2, 1), 0, "gather_nd: inputs float32[4 3], int64[2 1]: indices row 1: coordinate 4 out of range [-4, 4) on axis 0"},
		{data, tensor.MustFromSlice([]int32{0, -4}, 1, 2), 0, "indices row 0: coordinate -4 out of range [-3, 3) on axis 1"},
		{data, tensor.Zeros(tensor.Int64, 2, 3), 0, "indices' last axis has length 3, want 1 to 2 (data's rank less batch_dims)"},
		{data, tensor.Zeros(tensor.Int64, 3, 1), 1, "want data's and indices' first 1 (batch) dims equal"},
		{data, tensor.Zeros(tensor.Int64, 4, 1), 2, "batch_dims 2, want 0 to min(rank(data), rank(indices)) - 1"},
		{data, tensor.Zeros(tensor.Int64, 4, 1), -1, "batch_dims -1"},
		{data, tensor.Zeros(tensor.Float32, 1, 1), 0, "want int32 or int64 indices"},
		{tensor.Zeros(tensor.Int64, 2), tensor.Zeros(tensor.Int64, 1, 1), 0, "want float32 or float64 data"},
		{data, tensor.Scalar(int64(0)), 0, "want data and indices of rank >= 1"},
		{data, nil, 0, "gather_nd"},
	} {
		_, err := GatherND(c.data, c.idx, c.b)
		require.ErrorContains(t, err, c.want)
	}
}
