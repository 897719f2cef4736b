package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func TestMatMulBroadcastsBatchAndSumsGradient(t *testing.T) {
	tape := NewTape()
	// a [2, 1, 1, 2] against b [3, 2, 1]: the product is [2, 3, 1, 1], and
	// each of a's matrices is read by 3 products, each of b's by 2.
	a := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4}, 2, 1, 1, 2))
	b := tape.Var(tensor.MustFromSlice([]float64{1, 0, 0, 1, 1, 1}, 3, 2, 1))
	y := MatMul(a, b, false, false)
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 3, 1, 1}, got.Shape())
	require.Equal(t, []float64{1, 2, 3, 3, 4, 7}, got.Float64s())
	require.NoError(t, tape.Backward(Sum(y)))
	// d sum / d a[i] = sum over b's matrices of their column: (2, 2).
	require.Equal(t, []float64{2, 2, 2, 2}, a.Grad().Float64s())
	// d sum / d b[j] = sum over a's rows: (1+3, 2+4).
	require.Equal(t, []float64{4, 6, 4, 6, 4, 6}, b.Grad().Float64s())
}

func TestMatMulVectorOperands(t *testing.T) {
	tape := NewTape()
	v := tape.Var(tensor.MustFromSlice([]float64{1, 2}, 2))
	m := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	y := MatMul(v, m, false, false) // [2]·[2, 3] is [3]
	got, err := y.Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{9, 12, 15}, got.Float64s())
	require.NoError(t, tape.Backward(Sum(y)))
	require.Equal(t, []float64{6, 15}, v.Grad().Float64s())
	require.Equal(t, []float64{1, 1, 1, 2, 2, 2}, m.Grad().Float64s())
	require.ErrorContains(t, MatMul(v, v, true, false).Err(), "matmul: inputs float64[2], float64[2]: a transpose flag on a 1-D operand")
}
