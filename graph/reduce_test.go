package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// d/dx Σ x² = 2x.
func TestSumRecordsAndBackpropagates(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.MustFromSlice([]float64{1, -2, 3, 0.5}, 2, 2))
	loss := Sum(Mul(x, x))
	require.NoError(t, tape.Backward(loss))
	require.Equal(t, []float64{2, -4, 6, 1}, x.Grad().Float64s())
}

// Mean over rows keeps or drops the axis; d/dx mean(x, 1) = 1/3.
func TestReduceKeepShapes(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	require.Equal(t, tensor.Shape{2}, Mean(x, 1).Shape())
	require.Equal(t, tensor.Shape{2, 1}, MeanKeep(x, -1).Shape())
	require.Equal(t, tensor.Shape{}, Variance(x).Shape())
	require.Equal(t, tensor.Shape{1, 3}, MinKeep(x, 0).Shape())
	require.NoError(t, tape.Backward(Sum(Mean(x, 1))))
	for _, g := range x.Grad().Float64s() {
		require.InDelta(t, 1.0/3, g, 1e-15)
	}
}

// x - MaxKeep(x) broadcasts back. With the max detached (as TF's
// reduce_logsumexp stops its gradient), the gradient of LogSumExp of the
// shifted rows is softmax(x); with the max left in, the max's gradient
// subtracts 1 at each row's argmax.
func TestMaxKeepAndLogSumExpCompose(t *testing.T) {
	row := func(a, b, c float64) []float64 {
		s := a + b + c
		return []float64{a / s, b / s, c / s}
	}
	softmax := append(row(math.Exp(1), math.Exp(2), math.Exp(3)), row(math.Exp(-1), 1, math.Exp(4))...)
	for _, detach := range []bool{true, false} {
		tape := NewTape()
		x := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, -1, 0, 4}, 2, 3))
		m := MaxKeep(x, -1)
		require.Equal(t, tensor.Shape{2, 1}, m.Shape())
		if detach {
			m = m.Detach()
		}
		require.NoError(t, tape.Backward(Sum(LogSumExp(Sub(x, m), 1))))
		for i, g := range x.Grad().Float64s() {
			want := softmax[i]
			if !detach && i%3 == 2 { // both rows peak in their last column
				want--
			}
			require.InDelta(t, want, g, 1e-12, "detach=%v element %d", detach, i)
		}
	}
	z, err := LogSumExpKeep(NewTape().Const(tensor.Zeros(tensor.Float64, 2, 3)), 1).Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{2, 1}, z.Shape())
	require.InDelta(t, math.Log(3), z.At(0), 1e-15)
}

func TestReduceErrorIsSticky(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.Zeros(tensor.Float64, 2, 3))
	_, err := Sum(SumKeep(x, 2)).Tensor()
	require.ErrorContains(t, err, "sum: inputs float64[2 3]: axis 2 out of range")
	_, err = Max(nil).Tensor()
	require.ErrorContains(t, err, "max")
}
