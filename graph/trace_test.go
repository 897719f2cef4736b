package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A tracer sees every op that ran, in order, with its inputs and output
// tensors, and nothing of an op that failed; nil stops it.
func TestSetTrace(t *testing.T) {
	type seen struct {
		name string
		in   []*tensor.Tensor
		out  *tensor.Tensor
	}
	var got []seen
	tape := graph.NewEvalTape()
	tape.SetTrace(func(op ops.Op, in []*tensor.Tensor, out *tensor.Tensor) {
		got = append(got, seen{op.Name(), append([]*tensor.Tensor(nil), in...), out})
	})
	x := tensor.MustFromSlice([]float32{-1, 2, -3, 4}, 2, 2)
	w := tensor.MustFromSlice([]float32{1, 0, 0, 1}, 2, 2)
	h := graph.Relu(graph.MatMul(tape.Const(x), tape.Const(w), false, false))
	bad := graph.MatMul(h, tape.Const(tensor.MustFromSlice([]float32{1, 2, 3}, 3, 1)), false, false)
	require.Error(t, bad.Err())
	out, err := h.Tensor()
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "matmul", got[0].name)
	require.Same(t, x, got[0].in[0])
	require.Same(t, w, got[0].in[1])
	require.Equal(t, "relu", got[1].name)
	require.Same(t, got[0].out, got[1].in[0])
	require.Same(t, out, got[1].out)

	tape.SetTrace(nil)
	graph.Relu(h)
	require.Len(t, got, 2)
	var nilTape *graph.Tape
	nilTape.SetTrace(nil)
}
