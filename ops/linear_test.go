package ops

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("linear",
	gradCase{name: "bias", attrs: Attrs{}, in: ins(randn(1, 4, 3), randn(2, 3, 5), randn(3, 5)), wrt: []int{0, 1, 2}},
	gradCase{name: "rank3", attrs: Attrs{}, in: ins(randn(4, 2, 3, 3), randn(5, 3, 2), randn(6, 2)), wrt: []int{0, 1, 2}},
	gradCase{name: "nobias", attrs: Attrs{}, in: ins(randn(7, 4, 3), randn(8, 3, 5)), wrt: []int{0, 1}},
)

func TestLinearEqualsMatMulPlusBias(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, sh := range [][3]int{{5, 7, 3}, {301, 17, 400}} { // the second fills its bias rows over the cores
		x, w, b := randn(1, sh[0], sh[1]), randn(2, sh[1], sh[2]), randn(3, sh[2])
		got, err := Linear(x, w, b)
		require.NoError(t, err)
		xw, err := MatMul(x, w, false, false)
		require.NoError(t, err)
		want, err := Add(xw, b)
		require.NoError(t, err)
		requireClose(t, want, got, 1e-12, 1e-12)
		checkDTypes(t, LinearOp, x, w, b)
	}
}

func TestLinearErrors(t *testing.T) {
	_, err := Linear(tensor.Zeros(tensor.Float32, 2, 3), tensor.Zeros(tensor.Float32, 4, 5), nil)
	require.ErrorContains(t, err, "linear: inputs float32[2 3], float32[4 5]")
	_, err = Linear(tensor.Zeros(tensor.Float32, 2, 3), tensor.Zeros(tensor.Float32, 3, 5), tensor.Zeros(tensor.Float32, 4))
	require.ErrorContains(t, err, "bias [5]")
}
