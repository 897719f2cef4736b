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

// The GRU cell with packed W and U computes what GRUCellOp computes, bit
// for bit, in both reset forms and dtypes; packings of other tensors are
// not used.
func TestGRUCellPackedMatchesGRUCell(t *testing.T) {
	const n, in, h = 37, 19, 24
	for _, resetAfter := range []bool{true, false} {
		bias := randn(5, 3*h)
		if resetAfter {
			bias = randn(5, 2, 3*h)
		}
		for _, conv := range []func(*tensor.Tensor) *tensor.Tensor{func(x *tensor.Tensor) *tensor.Tensor { return x }, f32} {
			x, hs, w, u, b := conv(randn(1, n, in)), conv(randn(2, n, h)), conv(randn(3, in, 3*h)), conv(randn(4, h, 3*h)), conv(bias)
			want, err := GRUCellOp(resetAfter).Forward(ins(x, hs, w, u, b))
			require.NoError(t, err)
			pw, err := PackWeights(w)
			require.NoError(t, err)
			pu, err := PackWeights(u)
			require.NoError(t, err)
			other, err := PackWeights(conv(randn(6, in, 3*h)))
			require.NoError(t, err)
			for name, op := range map[string]Op{
				"both": GRUCellPackedOp(resetAfter, pw, pu), "w": GRUCellPackedOp(resetAfter, pw, nil),
				"u": GRUCellPackedOp(resetAfter, nil, pu), "other": GRUCellPackedOp(resetAfter, other, other),
			} {
				got, err := op.Forward(ins(x, hs, w, u, b))
				require.NoError(t, err)
				require.Equal(t, want.Raw(), got.Raw(), "reset_after %v %v packed %s", resetAfter, x.DType(), name)
			}
		}
	}
}
