package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func seq(n int, shape ...int) *tensor.Tensor {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i + 1)
	}
	return tensor.MustFromSlice(v, shape...)
}

// Each layout op only moves elements, so the gradient of Σ w·layout(x)
// for a fixed weight w puts every weight back on the element it came from.
func TestLayoutOpsBackpropagate(t *testing.T) {
	cases := []struct {
		name  string
		f     func(x *Value) *Value
		shape tensor.Shape
	}{
		{"reshape", func(x *Value) *Value { return Reshape(x, 3, -1) }, tensor.Shape{3, 4}},
		{"flatten", Flatten, tensor.Shape{2, 6}},
		{"transpose", func(x *Value) *Value { return Transpose(x, 1, 2, 0) }, tensor.Shape{3, 2, 2}},
		{"slice", func(x *Value) *Value { return Slice(x, 1, 1, 3) }, tensor.Shape{2, 2, 2}},
		{"concat", func(x *Value) *Value { return Concat(-1, x, x) }, tensor.Shape{2, 3, 4}},
		{"stack", func(x *Value) *Value { return Stack(1, x, Neg(x)) }, tensor.Shape{2, 2, 3, 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tape := NewTape()
			x := tape.Var(seq(12, 2, 3, 2))
			y := c.f(x)
			require.Equal(t, c.shape, y.Shape())
			// Loss Σ y² has gradient 2y, which each op routes back to x.
			require.NoError(t, tape.Backward(Sum(Mul(y, y))))
			g := x.Grad().Float64s()
			for i, v := range seq(12, 12).Float64s() {
				want := 2 * v
				switch c.name {
				case "slice":
					if j := (i / 2) % 3; j == 0 {
						want = 0 // row 0 of axis 1 is sliced away
					}
				case "concat", "stack":
					want *= 2 // x appears twice (±x for stack)
				}
				require.Equal(t, want, g[i], "element %d", i)
			}
		})
	}
}

func TestLayoutErrors(t *testing.T) {
	tape := NewTape()
	x := tape.Var(seq(6, 2, 3))
	_, err := Reshape(x, 4).Tensor()
	require.ErrorContains(t, err, "reshape: inputs float64[2 3]")
	_, err = Flatten(tape.Var(tensor.Scalar(1.0))).Tensor()
	require.ErrorContains(t, err, "flatten: inputs float64[]: want rank >= 1")
	_, err = Flatten(nil).Tensor()
	require.ErrorContains(t, err, "flatten")
	_, err = Concat(0).Tensor()
	require.ErrorContains(t, err, "concat: no values")
	_, err = Stack(0, x, tape.Var(seq(6, 3, 2))).Tensor()
	require.ErrorContains(t, err, "stack: inputs float64[2 3], float64[3 2]: want values of one shape")
	_, err = Stack(3, x).Tensor()
	require.ErrorContains(t, err, "stack: inputs float64[2 3]: axis 3 out of range for rank 3")
	_, err = Stack(0, x, nil).Tensor()
	require.ErrorContains(t, err, "stack: input 1 is a nil value")
	require.Equal(t, tensor.Shape{2, 1}, Flatten(tape.Var(seq(2, 2))).Shape())
	require.Equal(t, tensor.Shape{0, 6}, Flatten(tape.Var(tensor.Zeros(tensor.Float64, 0, 2, 3))).Shape())
}
