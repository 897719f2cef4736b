package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("broadcast_to",
	gradCase{name: "row", attrs: Attrs{Shape: []int{3, 4}}, in: ins(randn(1, 4)), wrt: []int{0}},
	gradCase{name: "column", attrs: Attrs{Shape: []int{3, 4}}, in: ins(randn(2, 3, 1)), wrt: []int{0}},
	gradCase{name: "new_axes", attrs: Attrs{Shape: []int{2, 3, 2, 4}}, in: ins(randn(3, 3, 1, 4)), wrt: []int{0}},
	gradCase{name: "same", attrs: Attrs{Shape: []int{2, 3}}, in: ins(randn(4, 2, 3)), wrt: []int{0}},
	gradCase{name: "scalar", attrs: Attrs{Shape: []int{2, 5}}, in: ins(randn(5)), wrt: []int{0}},
)

// TestBroadcastToMatchesNaive compares the op with an index-by-index
// broadcast on shapes with size-1, missing and odd-sized axes.
func TestBroadcastToMatchesNaive(t *testing.T) {
	for _, c := range []struct {
		name string
		x    tensor.Shape
		to   []int
	}{
		{"row", tensor.Shape{1, 7}, []int{5, 7}},
		{"column", tensor.Shape{5, 1}, []int{5, 7}},
		{"middle", tensor.Shape{3, 1, 2}, []int{3, 5, 2}},
		{"leading", tensor.Shape{1, 3}, []int{2, 4, 3}},
		{"scalar", tensor.Shape{}, []int{3, 2}},
		{"same", tensor.Shape{2, 3}, []int{2, 3}},
		{"empty", tensor.Shape{1, 3}, []int{0, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := randn(11, c.x...)
			got, err := BroadcastTo(x, c.to...)
			require.NoError(t, err)
			require.Equal(t, tensor.Shape(c.to), got.Shape())
			want := tensor.Zeros(tensor.Float64, c.to...)
			xs := bcastStrides(c.x, tensor.Shape(c.to))
			idx := make([]int, len(c.to))
			for o := range want.Size() {
				r, p := o, 0
				for a := len(c.to) - 1; a >= 0; a-- {
					idx[a] = r % c.to[a]
					r /= c.to[a]
					p += idx[a] * xs[a]
				}
				want.Float64s()[o] = x.At(p)
			}
			requireClose(t, want, got, 0, 0)
			checkDTypes(t, func() Op { return BroadcastToOp(BroadcastToAttrs{Shape: c.to}) }, x)
		})
	}
}

func TestBroadcastToErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	for _, c := range []struct {
		name string
		in   []*tensor.Tensor
		to   []int
		want string
	}{
		{"size", []*tensor.Tensor{x}, []int{4, 3}, "broadcast_to: inputs float32[2 3]: axis 0 of size 2 broadcasts to 4 only when it is 1"},
		{"rank", []*tensor.Tensor{x}, []int{3}, "cannot broadcast 2 axes to shape [3] of 1"},
		{"negative", []*tensor.Tensor{x}, []int{2, -3}, "negative size"},
		{"int", []*tensor.Tensor{tensor.Zeros(tensor.Int64, 3)}, []int{2, 3}, "want float32 or float64"},
		{"nil", []*tensor.Tensor{nil}, []int{2, 3}, "nil input"},
		{"arity", []*tensor.Tensor{x, x}, []int{2, 3}, "want 1 inputs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := BroadcastToOp(BroadcastToAttrs{Shape: c.to}).Forward(c.in)
			require.ErrorContains(t, err, c.want)
		})
	}
}
