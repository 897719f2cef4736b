package ops

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The packed op computes what LinearOp computes, bit for bit, on odd and
// GEMM-blocking-sized shapes in both dtypes, with and without a bias and
// with x of rank 1 to 3.
func TestLinearPackedMatchesLinear(t *testing.T) {
	for _, tc := range []struct {
		x       []int
		in, out int
		bias    bool
	}{
		{[]int{1, 7}, 7, 3, true},
		{[]int{4, 256}, 256, 517, true},
		{[]int{130, 33}, 33, 1031, true},
		{[]int{3, 5, 17}, 17, 9, false},
		{[]int{17}, 17, 64, true},
		{[]int{0, 5}, 5, 4, true},
	} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%v_%dx%d_%v", tc.x, tc.in, tc.out, dt), func(t *testing.T) {
				cast := func(x *tensor.Tensor) *tensor.Tensor {
					if dt == tensor.Float32 {
						return f32(x)
					}
					return x
				}
				x, w := cast(randn(1, tc.x...)), cast(randn(2, tc.in, tc.out))
				in := ins(x, w)
				if tc.bias {
					in = append(in, cast(randn(3, tc.out)))
				}
				want, err := LinearOp().Forward(in)
				require.NoError(t, err)
				p, err := PackWeights(w)
				require.NoError(t, err)
				got, err := LinearPackedOp(p).Forward(in)
				require.NoError(t, err)
				require.Equal(t, want.Shape(), got.Shape())
				require.Equal(t, want.DType(), got.DType())
				for i := range want.Size() {
					require.Equal(t, want.At(i), got.At(i), "element %d", i)
				}
			})
		}
	}
}

// Other weights than the packed ones, and bad inputs, go through LinearOp:
// its results and its errors.
func TestLinearPackedFallsBack(t *testing.T) {
	w, other := randn(2, 6, 4), randn(4, 6, 4)
	p, err := PackWeights(w)
	require.NoError(t, err)
	x := randn(1, 3, 6)
	want, err := Linear(x, other, nil)
	require.NoError(t, err)
	got, err := LinearPackedOp(p).Forward(ins(x, other))
	require.NoError(t, err)
	requireClose(t, want, got, 0, 0)

	_, err = LinearPackedOp(p).Forward(ins(randn(1, 3, 5), w))
	require.ErrorContains(t, err, "linear")
	_, err = LinearPackedOp(p).Forward(ins(x, w, randn(3, 5)))
	require.ErrorContains(t, err, "want bias [4]")
	_, err = LinearPackedOp(p).Forward(ins(f32(x), w))
	require.ErrorContains(t, err, "linear")

	for _, bad := range []*tensor.Tensor{nil, randn(1, 4), tensor.Zeros(tensor.Int64, 2, 2)} {
		_, err := PackWeights(bad)
		require.ErrorContains(t, err, "linear")
	}
}
