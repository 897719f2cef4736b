package infer_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A transpose of the last two axes that only matmuls read becomes their
// transpose flag (as a, as b, under a flag already set, read by two
// matmuls, batched), so the plan has no transpose step and no fallback.
func TestTransposeIntoMatmul(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 2, 3, 5, 4)
	y := b.Input(tensor.Float32, 7, 3)
	h := b.Op(ops.UnaryOp("tanh"), x)
	ht := b.Op(ops.TransposeOp(0, 1, 3, 2), h) // [2, 3, 4, 5]
	p := b.Op(ops.MatMulOp(false, false), ht, b.Const(randRange(t, 1, -1, 1, 5, 6)))
	q := b.Op(ops.MatMulOp(true, false), ht, b.Const(randRange(t, 2, -1, 1, 3, 4, 2))) // [2, 3, 5, 2]
	yt := b.Op(ops.TransposeOp(1, 0), b.Op(ops.UnaryOp("relu"), y))                    // [3, 7]
	r := b.Op(ops.MatMulOp(false, false), b.Op(ops.ReshapeOp(-1, 3), q), yt)           // [20, 7]
	s := b.Op(ops.MatMulOp(false, true), b.Const(randRange(t, 3, -1, 1, 4, 20)), b.Op(ops.TransposeOp(1, 0), r))
	g, err := b.Graph(b.Op(ops.ConcatOp(0), b.Op(ops.ReshapeOp(-1), p), b.Op(ops.ReshapeOp(-1), s)))
	require.NoError(t, err)
	in := []*tensor.Tensor{randRange(t, 4, -2, 2, 2, 3, 5, 4), randRange(t, 5, -2, 2, 7, 3)}
	fusedMatchesUnfused(t, g, in, "transposes and copies absorbed: 3", "after the passes: 10 ops")
	plain, err := g.Compile(infer.Options{NoFusion: true})
	require.NoError(t, err)
	require.Equal(t, []string{"transpose"}, plain.Fallbacks())
	fused, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	require.Empty(t, fused.Fallbacks())
}

// A transpose of constant weights is computed once and the linear layer
// reading it prepacks the result; a transpose read by another op than a
// matmul stays.
func TestTransposeOfConstant(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 3, 6)
	w := b.Op(ops.TransposeOp(1, 0), b.Const(randRange(t, 1, -1, 1, 4, 6)))
	h := b.Op(ops.LinearOp(), x, w)
	g, err := b.Graph(b.Op(ops.BinaryOp("add"), h, b.Op(ops.TransposeOp(1, 0), b.Op(ops.UnaryOp("neg"), b.Op(ops.TransposeOp(1, 0), h)))))
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 2, -2, 2, 3, 6)},
		"transposes and copies absorbed: 1", "linear weights prepacked: 1", "after the passes: 5 ops")
}

// Copies that keep every element in place (a transpose moving only unit
// axes, a slice of a whole axis, a concat of one input, a broadcast_to of
// the input's shape) become views of their source's slot.
func TestCopiesBecomeViews(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 3, 1, 4)
	h := b.Op(ops.UnaryOp("relu"), x)
	h = b.Op(ops.TransposeOp(1, 0, 2), h) // [1, 3, 4]
	h = b.Op(ops.SliceOp(2, 0, 4), h)
	h = b.Op(ops.ConcatOp(1), h)
	h = b.Op(ops.BroadcastToOp(ops.BroadcastToAttrs{Shape: []int{1, 3, 4}}), h)
	h = b.Op(ops.UnaryOp("tanh"), h)
	moved := b.Op(ops.TransposeOp(2, 1, 0), h) // moves data: stays
	g, err := b.Graph(moved)
	require.NoError(t, err)
	_, fused := fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 1, -2, 2, 3, 1, 4)},
		"transposes and copies absorbed: 4", "after the passes: 7 ops")
	require.Equal(t, tensor.Shape{4, 3, 1}, fused.Shape())
	p, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	require.Equal(t, []string{"transpose"}, p.Fallbacks())
	var buf bytes.Buffer
	require.NoError(t, p.Explain(&buf))
	_, after, _ := strings.Cut(buf.String(), "after the passes")
	require.Equal(t, 4, strings.Count(after, "view"))
}
