package infer_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// N sequence pools with the elementwise ops after them, plain inputs and
// an elementwise chain, concatenated along axis 1, run as one op whose
// output has the unfused ops' bits: every pool type, an empty sequence
// (its pad), odd widths, float32 and float64, and a batch large enough
// to run over the cores.
func TestSeqPoolConcat(t *testing.T) {
	for _, c := range []struct {
		name    string
		dt      tensor.DType
		lengths []int
		w1, w2  int
	}{
		{"odd widths with an empty sequence", tensor.Float32, []int{3, 0, 4, 5}, 5, 3},
		{"float64", tensor.Float64, []int{1, 6, 0}, 7, 2},
		{"over the cores", tensor.Float32, lengths(64), 301, 129},
	} {
		t.Run(c.name, func(t *testing.T) {
			off := offsets(c.lengths)
			total, batch := off[len(off)-1], len(c.lengths)
			b := infer.NewBuilder()
			x1 := b.Input(c.dt, total, c.w1)
			x2 := b.Input(c.dt, total, c.w2)
			plain := b.Input(c.dt, batch, 2)
			z := b.Input(c.dt, batch, 3)
			k := func(seed uint64, shape ...int) infer.Ref {
				return b.Const(typed(t, randRange(t, seed, 0.5, 1.5, shape...), c.dt))
			}
			pool := func(kind ops.SequencePoolType, pad float64, x infer.Ref) infer.Ref {
				return b.Op(ops.SequencePoolOp(kind, pad, off), x)
			}
			ins := []infer.Ref{
				pool(ops.SequencePoolSum, 0, x1),
				b.Op(ops.UnaryOp("tanh"), b.Op(ops.BinaryOp("add"), pool(ops.SequencePoolAverage, 0, x1), k(1, c.w1))),
				pool(ops.SequencePoolSqrt, 0, x2),
				b.Op(ops.UnaryOp("relu"), pool(ops.SequencePoolMax, -0.5, x2)),
				pool(ops.SequencePoolFirst, 0, x1),
				b.Op(ops.BinaryOp("mul"), k(2, batch, 1), pool(ops.SequencePoolLast, 2, x2)),
				plain,
				b.Op(ops.UnaryOp("sigmoid"), z),
			}
			g, err := b.Graph(b.Op(ops.ConcatOp(-1), ins...))
			require.NoError(t, err)
			in := []*tensor.Tensor{
				typed(t, randRange(t, 3, -2, 2, total, c.w1), c.dt), typed(t, randRange(t, 4, -2, 2, total, c.w2), c.dt),
				typed(t, randRange(t, 5, -2, 2, batch, 2), c.dt), typed(t, randRange(t, 6, -2, 2, batch, 3), c.dt),
			}
			want, got := fusedMatchesUnfused(t, g, in, "sequence pools and their concat as one op: 1", "after the passes: 1 ops",
				"seqpool_concat[pool_sum, pool_average+add+tanh, pool_sqrt, pool_max+relu, pool_first, pool_last+mul, copy, sigmoid]")
			for i := 0; i < want.Size(); i++ {
				require.Equal(t, want.At(i), got.At(i), "element %d", i)
			}
		})
	}
}

// lengths returns n sequence lengths from 0 to 22.
func lengths(n int) []int {
	l := make([]int, n)
	for i := range l {
		l[i] = (7 * i) % 23
	}
	return l
}

// A pool another op also reads stays a step of its own (its branch reads
// its output), and a concat along axis 0 or of plain inputs is left alone.
func TestSeqPoolConcatLeavesSharedPools(t *testing.T) {
	off := []int{0, 2, 5}
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 5, 4)
	p := b.Op(ops.SequencePoolOp(ops.SequencePoolSum, 0, off), x)
	q := b.Op(ops.SequencePoolOp(ops.SequencePoolMax, 0, off), x)
	y := b.Op(ops.BinaryOp("add"), b.Op(ops.ConcatOp(1), p, q), b.Op(ops.ConcatOp(1), q, p))
	g, err := b.Graph(b.Op(ops.ConcatOp(0), y, y))
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 1, -1, 1, 5, 4)}, "after the passes: 6 ops")
	plain, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, plain.Explain(&buf))
	require.NotContains(t, buf.String(), "seqpool_concat")
}

// The book's text CNN runs its two convolution-and-pool branches' bias
// and tanh and their concat as one op.
func TestTextCNNSeqPoolConcat(t *testing.T) {
	for _, m := range bookModels(t, 5) {
		if m.name != "sentiment_cnn" {
			continue
		}
		g, err := infer.Trace(m.forward, m.inputs(1)...)
		require.NoError(t, err)
		fusedMatchesUnfused(t, g, m.inputs(2), "sequence pools and their concat as one op: 1",
			"seqpool_concat[add+tanh, add+tanh]", "after the passes: 5 ops")
	}
}
