package ops_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// UnaryRun and BinaryRun give Forward's bits on one run, with an operand
// held (stride 0) on either side, and refuse other ops.
func TestElementwiseRuns(t *testing.T) {
	rng := tensor.NewRNG(7)
	x, err := tensor.RandUniform(rng, tensor.Float32, 0.25, 2, 37)
	require.NoError(t, err)
	y, err := tensor.RandUniform(rng, tensor.Float32, 0.25, 2, 37)
	require.NoError(t, err)
	s := tensor.MustFromSlice([]float32{1.5}, 1)
	for _, name := range []string{"relu", "tanh", "sigmoid", "exp", "gelu", "neg"} {
		want, err := ops.Run(ops.UnaryOp(name), x)
		require.NoError(t, err)
		got := make([]float32, 37)
		require.Equal(t, 1, ops.ElementwiseArity(ops.UnaryOp(name)))
		require.True(t, ops.UnaryRun(ops.UnaryOp(name), got, x.Float32s()))
		require.Equal(t, want.Float32s(), got, name)
	}
	for _, name := range []string{"add", "sub", "mul", "div", "pow", "maximum", "minimum"} {
		op := ops.BinaryOp(name)
		require.Equal(t, 2, ops.ElementwiseArity(op))
		for _, c := range []struct {
			a, b   *tensor.Tensor
			sa, sb int
		}{{x, y, 1, 1}, {x, s, 1, 0}, {s, y, 0, 1}} {
			want, err := ops.Run(op, c.a, c.b)
			require.NoError(t, err)
			got := make([]float32, 37)
			require.True(t, ops.BinaryRun(op, got, c.a.Float32s(), c.sa, c.b.Float32s(), c.sb))
			require.Equal(t, want.Float32s(), got, "%s strides %d %d", name, c.sa, c.sb)
		}
	}
	require.Equal(t, 0, ops.ElementwiseArity(ops.LinearOp()))
	require.False(t, ops.UnaryRun(ops.BinaryOp("add"), make([]float32, 1), []float32{1}))
	require.False(t, ops.BinaryRun(ops.UnaryOp("relu"), make([]float32, 1), []float32{1}, 1, []float32{1}, 1))
}
