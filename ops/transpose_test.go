package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("transpose",
	gradCase{name: "2d", attrs: Attrs{Perm: []int{1, 0}}, in: ins(randn(1, 3, 4)), wrt: []int{0}},
	gradCase{name: "3d_rotate", attrs: Attrs{Perm: []int{2, 0, 1}}, in: ins(randn(2, 2, 3, 4)), wrt: []int{0}},
	gradCase{name: "4d", attrs: Attrs{Perm: []int{0, 2, 3, 1}}, in: ins(randn(3, 2, 3, 2, 2)), wrt: []int{0}},
	gradCase{name: "reverse", attrs: Attrs{}, in: ins(randn(4, 2, 3, 4)), wrt: []int{0}},
)

func TestTransposeMatchesNaive(t *testing.T) {
	// y[k][i][j] = x[i][j][k] for perm (2, 0, 1).
	x := randn(1, 2, 3, 4)
	want := tensor.Zeros(tensor.Float64, 4, 2, 3)
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 4; k++ {
				want.Float64s()[(k*2+i)*3+j] = x.At((i*3+j)*4 + k)
			}
		}
	}
	got, err := Transpose(x, 2, 0, 1)
	require.NoError(t, err)
	requireClose(t, want, got, 0, 0)
	checkDTypes(t, func() Op { return TransposeOp(2, 0, 1) }, x)

	rev, err := Transpose(tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{3, 2}, rev.Shape())
	require.Equal(t, []float32{1, 4, 2, 5, 3, 6}, rev.Float32s())
}

func TestTransposeErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := Transpose(x, 0)
	require.ErrorContains(t, err, "transpose: inputs float32[2 3]: tensor: transpose of shape [2 3] with perm [0]: want 2 axes")
	_, err = Transpose(x, 1, 1)
	require.ErrorContains(t, err, "not a permutation")
	_, err = Transpose(nil)
	require.ErrorContains(t, err, "transpose")
}
