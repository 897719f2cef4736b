package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func TestSeq(t *testing.T) {
	tape := NewTape()
	r, err := tensor.NewRagged(tensor.Zeros(tensor.Float64, 4, 2), []int{0, 1, 1, 4})
	require.NoError(t, err)
	s := tape.VarSeq(r)
	require.NoError(t, s.Err())
	require.Equal(t, []int{1, 0, 3}, s.Lengths())
	require.Equal(t, 3, s.BatchSize())
	y := s.With(Tanh(s.Values))
	require.Equal(t, s.Offsets, y.Offsets)

	bad := NewSeq(tape.Const(tensor.Zeros(tensor.Float64, 4, 2)), []int{0, 3, 2, 4})
	require.ErrorContains(t, bad.Err(), "decrease")
	require.ErrorContains(t, NewSeq(nil, []int{0}).Err(), "nil")
	require.NoError(t, NewSeq(tape.Const(tensor.Zeros(tensor.Float64, 4, 2)), []int{0, 4}).Err())
}
