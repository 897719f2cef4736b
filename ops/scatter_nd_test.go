package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("scatter_nd",
	gradCase{name: "none_rows", attrs: Attrs{ScatterReduction: ScatterNone}, in: ins(randn(1, 4, 3), tensor.MustFromSlice([]int64{2, 0}, 2, 1), randn(2, 2, 3)), wrt: []int{0, 2}},
	gradCase{name: "none_elements", attrs: Attrs{ScatterReduction: ScatterNone}, in: ins(randn(3, 2, 3, 2), tensor.MustFromSlice([]int32{1, 2, 0, 0, -1, -2, 1, 1, 1}, 3, 3), randn(4, 3)), wrt: []int{0, 2}},
	gradCase{name: "add_repeats", attrs: Attrs{ScatterReduction: ScatterAdd}, in: ins(randn(5, 3, 4), tensor.MustFromSlice([]int64{1, 3, 1, 3, 0, 0, 1, 3}, 2, 2, 2), randn(6, 2, 2)), wrt: []int{0, 2}},
)

// naiveScatterND applies the updates one element at a time by unravelling
// each update element's position into data's coordinates.
func naiveScatterND(data, indices, updates *tensor.Tensor, add bool) *tensor.Tensor {
	ds, is := data.Shape(), indices.Shape()
	k := is[len(is)-1]
	out := tensor.Zeros(tensor.Float64, ds...)
	for i := range data.Size() {
		out.Float64s()[i] = data.At(i)
	}
	rest := ds[k:]
	for e := range updates.Size() {
		row, within := e/max(rest.Size(), 1), e%max(rest.Size(), 1)
		coord := make([]int, len(ds))
		for j := 0; j < k; j++ {
			v := int(indices.At(row*k + j))
			if v < 0 {
				v += ds[j]
			}
			coord[j] = v
		}
		for d, rem := len(ds)-1, within; d >= k; d-- {
			coord[d], rem = rem%ds[d], rem/ds[d]
		}
		off := 0
		for d := range ds {
			off = off*ds[d] + coord[d]
		}
		if add {
			out.Float64s()[off] += updates.At(e)
		} else {
			out.Float64s()[off] = updates.At(e)
		}
	}
	return out
}

func TestScatterNDMatchesNaive(t *testing.T) {
	for i, c := range []struct {
		data    []int
		indices *tensor.Tensor
		add     bool
	}{
		{[]int{8}, tensor.MustFromSlice([]int64{4, 3, -2, 7}, 4, 1), false},
		{[]int{4, 4, 4}, tensor.MustFromSlice([]int64{0, 2}, 2, 1), false},
		{[]int{4, 5, 3}, tensor.MustFromSlice([]int32{1, 4, -1, 0, 3, 3}, 3, 2), false},
		{[]int{2, 3, 4}, tensor.MustFromSlice([]int64{1, 2, 3, 0, 0, 0, 1, 2, 3, 1, 2, 3}, 2, 2, 3), true},
		{[]int{5, 2}, tensor.MustFromSlice([]int64{0, -5, 4, 0}, 4, 1), true},
		{[]int{3, 0}, tensor.MustFromSlice([]int64{1, 2}, 2, 1), false},
		{[]int{3, 2}, tensor.Zeros(tensor.Int64, 0, 1), false},
	} {
		data := randn(uint64(i+1), c.data...)
		is := c.indices.Shape()
		ushape := append(is[:len(is)-1].Clone(), c.data[is[len(is)-1]:]...)
		upd := randn(uint64(i+50), ushape...)
		r := ScatterNone
		if c.add {
			r = ScatterAdd
		}
		got, err := ScatterND(data, c.indices, upd, r)
		require.NoError(t, err, "case %d", i)
		requireClose(t, naiveScatterND(data, c.indices, upd, c.add), got, 1e-15, 1e-15)
		checkDTypes(t, func() Op { return ScatterNDOp(ScatterNDAttrs{Reduction: r}) }, data, c.indices, upd)
		require.Equal(t, naiveScatterND(data, c.indices, upd, c.add).Float64s(), got.Float64s())
	}
}

func TestScatterNDGradientMasksReplaced(t *testing.T) {
	data := tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	idx := tensor.MustFromSlice([]int64{-1}, 1, 1)
	upd := tensor.MustFromSlice([]float64{7, 8}, 1, 2)
	gout := tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 3, 2)
	for _, c := range []struct {
		r             ScatterReduction
		out, gd, gupd []float64
	}{
		{ScatterNone, []float64{1, 2, 3, 4, 7, 8}, []float64{1, 2, 3, 4, 0, 0}, []float64{5, 6}},
		{ScatterAdd, []float64{1, 2, 3, 4, 12, 14}, []float64{1, 2, 3, 4, 5, 6}, []float64{5, 6}},
	} {
		op := ScatterNDOp(ScatterNDAttrs{Reduction: c.r})
		out, err := op.Forward(ins(data, idx, upd))
		require.NoError(t, err)
		require.Equal(t, c.out, out.Float64s(), c.r.String())
		g, err := op.Backward(ins(data, idx, upd), out, gout, []bool{true, false, true})
		require.NoError(t, err)
		require.Equal(t, c.gd, g[0].Float64s(), c.r.String())
		require.Nil(t, g[1])
		require.Equal(t, c.gupd, g[2].Float64s(), c.r.String())
	}
	require.Equal(t, []float64{1, 2, 3, 4, 5, 6}, data.Float64s(), "data is not written")
}

func TestScatterReductionText(t *testing.T) {
	for _, r := range []ScatterReduction{ScatterNone, ScatterAdd} {
		b, err := r.MarshalText()
		require.NoError(t, err)
		var back ScatterReduction
		require.NoError(t, back.UnmarshalText(b))
		require.Equal(t, r, back)
	}
	var r ScatterReduction
	require.ErrorContains(t, r.UnmarshalText([]byte("mul")), `unknown scatter reduction "mul" (want none or add)`)
	require.Equal(t, "ScatterReduction(7)", ScatterReduction(7).String())
}

func TestScatterNDErrors(t *testing.T) {
	data := tensor.Zeros(tensor.Float32, 4, 3)
	row := tensor.Zeros(tensor.Float32, 1, 3)
	for _, c := range []struct {
		data, idx, upd *tensor.Tensor
		r              ScatterReduction
		want           string
	}{
		{data, tensor.MustFromSlice([]int64{4}, 1, 1), row, ScatterNone, "scatter_nd: inputs float32[4 3], int64[1 1], float32[1 3]: indices row 0: coordinate 4 out of range [-4, 4) on axis 0"},
		{data, tensor.MustFromSlice([]int64{1, -1}, 2, 1), tensor.Zeros(tensor.Float32, 2, 3), ScatterNone, ""},
		{data, tensor.MustFromSlice([]int64{1, -3}, 2, 1), tensor.Zeros(tensor.Float32, 2, 3), ScatterNone, "scatter_nd: inputs float32[4 3], int64[2 1], float32[2 3]: indices row 1 repeats the coordinates [-3] of an earlier row; reduction none needs distinct rows"},
		{data, tensor.MustFromSlice([]int64{1}, 1, 1), tensor.Zeros(tensor.Float32, 3), ScatterNone, "scatter_nd: inputs float32[4 3], int64[1 1], float32[3]: want updates of shape [1 3] (indices.shape[:-1] + data.shape[1:])"},
		{data, tensor.Zeros(tensor.Int64, 1, 3), tensor.Zeros(tensor.Float32, 1), ScatterNone, "indices' last axis has length 3, want 1 to data's rank 2"},
		{data, tensor.Zeros(tensor.Int64), row, ScatterNone, "want data and indices of rank >= 1"},
		{data, tensor.Zeros(tensor.Float32, 1, 1), row, ScatterNone, "want int32 or int64 indices"},
		{data, tensor.Zeros(tensor.Int64, 1, 1), tensor.Zeros(tensor.Float64, 1, 3), ScatterNone, "want float32 or float64 data and updates of one dtype"},
		{data, tensor.Zeros(tensor.Int64, 1, 1), row, ScatterReduction(5), "unknown reduction ScatterReduction(5) (want ScatterNone or ScatterAdd)"},
		{data, nil, row, ScatterNone, "scatter_nd"},
	} {
		_, err := ScatterND(c.data, c.idx, c.upd, c.r)
		if c.want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, c.want)
	}
}
