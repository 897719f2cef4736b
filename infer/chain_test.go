package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// chainStep is one elementwise op of a test chain: a unary op, or a
// binary op with a constant of shape other on the left or right of the
// running value.
type chainStep struct {
	op    string
	other []int // nil: unary
	left  bool  // the constant is operand a
}

// Chains of elementwise ops, each read only by the next, run as one loop
// whose output has the unfused ops' bits: broadcasting operands on
// either side (per channel, per row, a scalar, a column that gives runs
// of one element), the arithmetic and the table's binary ops, unary ops
// between, float64, and a tensor long enough to run in many pieces over
// the cores.
func TestElementwiseChains(t *testing.T) {
	for _, c := range []struct {
		name  string
		dt    tensor.DType
		shape []int
		steps []chainStep
	}{
		{"resnet input normalisation", tensor.Float32, []int{2, 3, 9, 11}, []chainStep{{"sub", []int{1, 3, 1, 1}, false}, {"div", []int{1, 3, 1, 1}, false}}},
		{"bias and tanh", tensor.Float32, []int{5, 7}, []chainStep{{"add", []int{7}, false}, {"tanh", nil, false}}},
		{"constants on the left", tensor.Float32, []int{3, 4, 5}, []chainStep{{"sub", []int{4, 1}, true}, {"exp", nil, false}, {"div", []int{1}, true}, {"neg", nil, false}}},
		{"table ops", tensor.Float32, []int{6, 5}, []chainStep{{"sigmoid", nil, false}, {"pow", []int{6, 5}, true}, {"maximum", []int{5}, false}, {"minimum", []int{6, 1}, true}, {"relu", nil, false}}},
		{"column broadcast", tensor.Float32, []int{9, 4}, []chainStep{{"mul", []int{9, 1}, false}, {"square", nil, false}, {"add", []int{9, 4}, false}}},
		{"float64", tensor.Float64, []int{4, 3, 2}, []chainStep{{"mul", []int{3, 1}, false}, {"sigmoid", nil, false}, {"sub", []int{4, 3, 2}, true}, {"tanh", nil, false}}},
		{"many pieces", tensor.Float32, []int{3, 70001}, []chainStep{{"relu", nil, false}, {"add", []int{1, 70001}, false}, {"sigmoid", nil, false}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := infer.NewBuilder()
			x := b.Input(c.dt, c.shape...)
			y := x
			for i, s := range c.steps {
				if s.other == nil {
					y = b.Op(ops.UnaryOp(s.op), y)
					continue
				}
				k := b.Const(typed(t, randRange(t, uint64(10+i), 0.5, 1.5, s.other...), c.dt))
				if s.left {
					y = b.Op(ops.BinaryOp(s.op), k, y)
				} else {
					y = b.Op(ops.BinaryOp(s.op), y, k)
				}
			}
			g, err := b.Graph(y)
			require.NoError(t, err)
			plain, fused := fusedMatchesUnfused(t, g, []*tensor.Tensor{typed(t, randRange(t, 3, -2, 2, c.shape...), c.dt)},
				"elementwise chains as one loop: 1", "after the passes: 1 ops")
			for i := 0; i < plain.Size(); i++ {
				require.Equal(t, plain.At(i), fused.At(i), "element %d", i)
			}
		})
	}
}

// typed returns x in dtype dt.
func typed(t *testing.T, x *tensor.Tensor, dt tensor.DType) *tensor.Tensor {
	y, err := x.Cast(dt)
	require.NoError(t, err)
	return y
}

// A value read by two ops ends a chain (tanh's output, read by relu and
// neg: relu starts a chain of its own, whose add takes neg's output as
// its other operand); an op that broadcasts its input up starts none;
// x·x on the running value stops one.
func TestElementwiseChainBoundaries(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 4, 6)
	h := b.Op(ops.UnaryOp("tanh"), b.Op(ops.BinaryOp("add"), x, b.Const(randRange(t, 1, -1, 1, 6))))
	y := b.Op(ops.BinaryOp("add"), b.Op(ops.UnaryOp("relu"), h), b.Op(ops.UnaryOp("neg"), h))
	g, err := b.Graph(y)
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 2, -2, 2, 4, 6)},
		"elementwise chains as one loop: 2", "elementwise(add,tanh)", "elementwise(relu,add)", "after the passes: 3 ops")

	b = infer.NewBuilder()
	x = b.Input(tensor.Float32, 1, 6)
	up := b.Op(ops.BinaryOp("add"), x, b.Const(randRange(t, 3, -1, 1, 5, 1))) // [5, 6]
	sq := b.Op(ops.BinaryOp("mul"), up, up)
	g, err = b.Graph(b.Op(ops.UnaryOp("relu"), sq))
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 4, -2, 2, 1, 6)},
		"elementwise chains as one loop: 1", "elementwise(mul,relu)", "after the passes: 2 ops")
}
