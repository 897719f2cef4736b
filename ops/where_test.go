package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("where",
	gradCase{name: "same", attrs: Attrs{}, in: ins(tensor.MustFromSlice([]int64{1, 0, 0, 3, 0, 1}, 2, 3), randn(1, 2, 3), randn(2, 2, 3)), wrt: []int{1, 2}},
	gradCase{name: "bcast_all", attrs: Attrs{}, in: ins(tensor.MustFromSlice([]float64{0, 2.5}, 2, 1), randn(3, 2, 3), randn(4, 3)), wrt: []int{1, 2}},
	gradCase{name: "scalar_cond", attrs: Attrs{}, in: ins(tensor.Scalar[int32](1), randn(5, 4), randn(6, 3, 4)), wrt: []int{1, 2}},
	gradCase{name: "bcast_a", attrs: Attrs{}, in: ins(tensor.MustFromSlice([]int32{0, 1, 1, 0}, 4), randn(7), randn(8, 2, 4)), wrt: []int{1, 2}},
)

func TestWhereMatchesNaive(t *testing.T) {
	// cond [2,1], a [2,3], b [3]: out[i][j] = cond[i] != 0 ? a[i][j] : b[j].
	cond := tensor.MustFromSlice([]int32{0, 7}, 2, 1)
	a, b := randn(1, 2, 3), randn(2, 3)
	want := tensor.Zeros(tensor.Float64, 2, 3)
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			v := b.At(j)
			if cond.At(i) != 0 {
				v = a.At(i*3 + j)
			}
			want.Float64s()[i*3+j] = v
		}
	}
	got, err := Where(cond, a, b)
	require.NoError(t, err)
	requireClose(t, want, got, 0, 0)
	checkDTypes(t, WhereOp, cond, a, b)
}

func TestWhereCondIsAnyDType(t *testing.T) {
	a := tensor.MustFromSlice([]float32{1, 2, 3}, 3)
	b := tensor.MustFromSlice([]float32{-1, -2, -3}, 3)
	for _, cond := range []*tensor.Tensor{
		tensor.MustFromSlice([]float32{0, -0.5, 1}, 3),
		tensor.MustFromSlice([]float64{0, 2, 3}, 3),
		tensor.MustFromSlice([]int64{0, 1, -1}, 3),
	} {
		got, err := Where(cond, a, b)
		require.NoError(t, err)
		require.Equal(t, []float32{-1, 2, 3}, got.Float32s(), cond.DType().String())
	}
}

func TestWhereErrors(t *testing.T) {
	f := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := Where(tensor.Zeros(tensor.Int32, 4), f, f)
	require.ErrorContains(t, err, "where: inputs int32[4], float32[2 3], float32[2 3]: shapes")
	_, err = Where(tensor.Zeros(tensor.Int32, 3), f, tensor.Zeros(tensor.Float64, 2, 3))
	require.ErrorContains(t, err, "where: inputs int32[3], float32[2 3], float64[2 3]: want float32 or float64 a and b of one dtype")
	_, err = Where(tensor.Zeros(tensor.Int32, 3), tensor.Zeros(tensor.Int64, 3), tensor.Zeros(tensor.Int64, 3))
	require.ErrorContains(t, err, "want float32 or float64 a and b")
	_, err = Where(nil, f, f)
	require.ErrorContains(t, err, "where")
}
