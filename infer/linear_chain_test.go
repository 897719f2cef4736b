package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Consecutive linear layers fold into one where that saves work: with and
// without biases, on a rank-3 input, a chain of three, after a batch norm
// folded into the first, and in float64.
func TestFoldLinearChains(t *testing.T) {
	for _, c := range []struct {
		name   string
		dt     tensor.DType
		dims   []int  // k, n1, n2, ...
		bias   []bool // per layer
		bn     bool   // a batch norm after the first layer
		folded string
		after  string
	}{
		{"both biases", tensor.Float32, []int{7, 16, 4}, []bool{true, true}, false, "folded into one: 1", "after the passes: 1 ops"},
		{"no bias", tensor.Float32, []int{9, 13, 5}, []bool{false, false}, false, "folded into one: 1", "after the passes: 1 ops"},
		{"first bias only", tensor.Float32, []int{6, 11, 6}, []bool{true, false}, false, "folded into one: 1", "after the passes: 1 ops"},
		{"three layers", tensor.Float32, []int{5, 12, 9, 3}, []bool{false, true, true}, false, "folded into one: 2", "after the passes: 1 ops"},
		{"after a batch norm", tensor.Float32, []int{8, 10, 3}, []bool{true, true}, true, "batch norm folded into conv/linear: 1", "consecutive linear layers folded into one: 1"},
		{"float64", tensor.Float64, []int{7, 15, 2}, []bool{false, true}, false, "folded into one: 1", "after the passes: 1 ops"},
		{"bottleneck left as two products", tensor.Float32, []int{32, 2, 32}, []bool{true, true}, false, "linear weights prepacked: 2", "after the passes: 2 ops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := infer.NewBuilder()
			rows := []int{3, 2}
			if c.bn { // batch norm's channels are axis 1: a rank-2 layer
				rows = []int{6}
			}
			x := b.Input(c.dt, append(rows, c.dims[0])...)
			h := x
			for l := 0; l+1 < len(c.dims); l++ {
				in := []infer.Ref{h, b.Const(typed(t, randRange(t, uint64(10*l+1), -0.5, 0.5, c.dims[l], c.dims[l+1]), c.dt))}
				if c.bias[l] {
					in = append(in, b.Const(typed(t, randRange(t, uint64(10*l+2), -1, 1, c.dims[l+1]), c.dt)))
				}
				h = b.Op(ops.LinearOp(), in...)
				if c.bn && l == 0 {
					h = batchNorm(t, b, h, c.dims[1], 60)
				}
			}
			g, err := b.Graph(h)
			require.NoError(t, err)
			in := typed(t, randRange(t, 3, -2, 2, append(rows, c.dims[0])...), c.dt)
			fusedMatchesUnfused(t, g, []*tensor.Tensor{in}, c.folded, c.after)
		})
	}
}

// A linear layer whose output another op also reads, or with an
// activation before the next layer, keeps its own step.
func TestFoldLinearChainsStops(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 4, 6)
	h := b.Op(ops.LinearOp(), x, b.Const(randRange(t, 1, -1, 1, 6, 10)))
	y := b.Op(ops.LinearOp(), h, b.Const(randRange(t, 2, -1, 1, 10, 3)))
	z := b.Op(ops.LinearOp(), b.Op(ops.UnaryOp("relu"), h), b.Const(randRange(t, 3, -1, 1, 10, 3)))
	g, err := b.Graph(b.Op(ops.BinaryOp("add"), y, z))
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 4, -2, 2, 4, 6)}, "linear weights prepacked: 3", "after the passes: 4 ops")

	b = infer.NewBuilder()
	x = b.Input(tensor.Float32, 4, 6)
	h = b.Op(ops.UnaryOp("relu"), b.Op(ops.LinearOp(), x, b.Const(randRange(t, 1, -1, 1, 6, 10))))
	g, err = b.Graph(b.Op(ops.LinearOp(), h, b.Const(randRange(t, 2, -1, 1, 10, 3))))
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 4, -2, 2, 4, 6)}, "linear+relu", "after the passes: 2 ops")
}
