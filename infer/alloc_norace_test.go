//go:build !race

// The race detector makes sync.Pool (the kernels' scratch) drop items at
// random, so allocation counts mean nothing under -race; this file is
// built without it.

package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A plan whose ops' kernels allocate nothing (embedding, sequence pooling,
// concat, reshape: no parallel loop) makes no allocation per call: the
// arena, the input binding and the steps are the plan's own.
func TestRunAllocatesNothing(t *testing.T) {
	b := infer.NewBuilder()
	ids := b.Input(tensor.Int64, 9)
	e := b.Op(ops.EmbeddingOp(-1), b.Const(randInput(t, 1, 20, 4)), ids)
	off := []int{0, 2, 2, 9}
	avg := b.Op(ops.SequencePoolOp(ops.SequencePoolAverage, 0, off), e)
	mx := b.Op(ops.SequencePoolOp(ops.SequencePoolMax, 0, off), e)
	y := b.Op(ops.ReshapeOp(-1), b.Op(ops.ConcatOp(1), avg, mx))
	g, err := b.Graph(y)
	require.NoError(t, err)
	p, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	require.Empty(t, p.Fallbacks())
	in := idsOf(2, 20, []int{9})
	out := tensor.Empty(tensor.Float32, 24)
	require.NoError(t, p.Run(out, in))
	require.Zero(t, testing.AllocsPerRun(20, func() {
		if err := p.Run(out, in); err != nil {
			t.Fatal(err)
		}
	}))
}

// The MNIST models' plans allocate less per call than their eval tapes;
// what they allocate is the kernels' (the closures internal/par's loops
// take), not the plan's.
func TestRunAllocatesLessThanTape(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		for _, batch := range []int{1, 64} {
			p := mnistPlan(t, name, batch, infer.Options{})
			x := randInput(t, 4, batch, 1, 28, 28)
			out := tensor.Empty(tensor.Float32, batch, 10)
			require.NoError(t, p.Run(out, x))
			plan := testing.AllocsPerRun(10, func() {
				if err := p.Run(out, x); err != nil {
					t.Fatal(err)
				}
			})
			net := mnistNet(t, name)
			tape := graph.NewEvalTape()
			eval := testing.AllocsPerRun(10, func() {
				if _, err := net.Forward(tape.Const(x)).Tensor(); err != nil {
					t.Fatal(err)
				}
				tape.Release()
			})
			t.Logf("%s batch %d: plan %v, eval tape %v allocations a call", name, batch, plan, eval)
			require.Less(t, plan, eval, "%s batch %d", name, batch)
		}
	}
}
