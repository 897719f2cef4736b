package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("linear_concat",
	gradCase{name: "bias", attrs: Attrs{}, in: ins(randn(1, 4, 3), randn(2, 4, 2), randn(3, 5, 6), randn(4, 6)), wrt: []int{0, 1, 2, 3}},
	gradCase{name: "rank3", attrs: Attrs{}, in: ins(randn(5, 2, 3, 1), randn(6, 2, 3, 4), randn(7, 5, 2), randn(8, 2)), wrt: []int{0, 1, 2, 3}},
	gradCase{name: "nobias", attrs: Attrs{}, in: ins(randn(9, 3, 5), randn(10, 3, 2), randn(11, 7, 3)), wrt: []int{0, 1, 2}},
)

// TestLinearConcatEqualsLinearOfConcat runs the op against linear over the
// built concatenation, forward and backward, on odd widths and row counts
// that span several GEMM blocks.
func TestLinearConcatEqualsLinearOfConcat(t *testing.T) {
	for _, c := range []struct {
		name         string
		rows, ka, kb int
		out          int
		bias         bool
		dt           tensor.DType
		tol          float64
	}{
		{"float64 bias", 37, 5, 3, 7, true, tensor.Float64, 1e-12},
		{"float64 no bias", 1, 9, 1, 2, false, tensor.Float64, 1e-12},
		{"float32 wide", 301, 129, 33, 65, true, tensor.Float32, 1e-4},
		{"float32 empty a", 6, 0, 4, 3, true, tensor.Float32, 1e-5},
	} {
		t.Run(c.name, func(t *testing.T) {
			cast := func(x *tensor.Tensor) *tensor.Tensor {
				y, err := x.Cast(c.dt)
				require.NoError(t, err)
				return y
			}
			a, b, w := cast(randn(21, c.rows, c.ka)), cast(randn(22, c.rows, c.kb)), cast(randn(23, c.ka+c.kb, c.out))
			in := []*tensor.Tensor{a, b, w}
			var bias *tensor.Tensor
			if c.bias {
				bias = cast(randn(24, c.out))
				in = append(in, bias)
			}
			got, err := LinearConcat(a, b, w, bias)
			require.NoError(t, err)
			ab, err := Concat(-1, a, b)
			require.NoError(t, err)
			want, err := Linear(ab, w, bias)
			require.NoError(t, err)
			requireClose(t, want, got, c.tol, c.tol)

			gout := cast(randn(25, c.rows, c.out))
			need := make([]bool, len(in))
			for i := range need {
				need[i] = true
			}
			grads, err := LinearConcatOp().Backward(in, got, gout, need)
			require.NoError(t, err)
			lin := []*tensor.Tensor{ab, w}
			if c.bias {
				lin = append(lin, bias)
			}
			wantGrads, err := LinearOp().Backward(lin, want, gout, need[1:])
			require.NoError(t, err)
			wantA, err := Slice(wantGrads[0], 1, 0, c.ka)
			require.NoError(t, err)
			wantB, err := Slice(wantGrads[0], 1, c.ka, c.ka+c.kb)
			require.NoError(t, err)
			requireClose(t, wantA, grads[0], c.tol, c.tol)
			requireClose(t, wantB, grads[1], c.tol, c.tol)
			for i, g := range wantGrads[1:] {
				requireClose(t, g, grads[2+i], c.tol, c.tol)
			}
		})
	}
	checkDTypes(t, LinearConcatOp, randn(1, 3, 2), randn(2, 3, 4), randn(3, 6, 5), randn(4, 5))
}

func TestLinearConcatErrors(t *testing.T) {
	z := func(s ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, s...) }
	for _, c := range []struct {
		name string
		in   []*tensor.Tensor
		want string
	}{
		{"too few inputs", []*tensor.Tensor{z(2, 3), z(3, 5)}, "want inputs a, b, w and optional bias"},
		{"leading axes differ", []*tensor.Tensor{z(2, 3), z(4, 1), z(4, 5)}, "same leading axes"},
		{"rank differs", []*tensor.Tensor{z(2, 3), z(2, 1, 1), z(4, 5)}, "same leading axes"},
		{"w rows", []*tensor.Tensor{z(2, 3), z(2, 1), z(5, 5)}, "want w [4, out]"},
		{"bias size", []*tensor.Tensor{z(2, 3), z(2, 1), z(4, 5), z(4)}, "want bias [5]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(LinearConcatOp(), c.in...)
			require.ErrorContains(t, err, "linear_concat: inputs float32")
			require.ErrorContains(t, err, c.want)
		})
	}
}
