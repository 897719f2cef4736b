//go:build !race

// sync.Pool (the dynamic layers' buffers, qgemm's workspaces) drops items
// at random under -race, so allocation counts are only meaningful
// without it.

package infer_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The dynamic layers allocate nothing per call once warm (each takes its
// buffers from its pool): a plan of one dynamic linear_concat or
// sequence_conv_pool_max allocates nothing, the text CNN's dynamic plan
// nothing, and the stacked LSTM's no more than its float32 plan (whose
// float ops allocate).
func TestDynamicRunAllocatesNothing(t *testing.T) {
	for _, m := range bookModels(t, 8)[1:3] {
		g, err := infer.Trace(m.forward, m.inputs(1)...)
		require.NoError(t, err)
		in := m.inputs(2)
		allocs := map[bool]float64{}
		for _, dyn := range []bool{false, true} {
			opts := infer.Options{}
			if dyn {
				opts.Dynamic = &infer.DynamicQuant{}
			}
			p, err := g.Compile(opts)
			require.NoError(t, err)
			y, err := p.Forward(in...)
			require.NoError(t, err)
			require.NoError(t, p.Run(y[0], in...))
			allocs[dyn] = testing.AllocsPerRun(10, func() {
				if err := p.Run(y[0], in...); err != nil {
					t.Fatal(err)
				}
			})
		}
		t.Logf("%s: %v allocations a call in float32, %v in dynamic int8", m.name, allocs[false], allocs[true])
		require.LessOrEqual(t, allocs[true], allocs[false], m.name)
		if m.name == "sentiment_cnn" {
			require.Zero(t, allocs[true])
		}
	}
	// Each dynamic op alone: linear_concat and sequence_conv_pool_max.
	rng := tensor.NewRNG(3)
	a, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, 30, 16)
	require.NoError(t, err)
	c, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, 30, 8)
	require.NoError(t, err)
	w, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, 24, 12)
	require.NoError(t, err)
	f, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, 48, 12)
	require.NoError(t, err)
	for _, op := range []ops.Op{ops.LinearConcatOp(), ops.SequenceConvPoolMaxOp([]int{0, 7, 7, 30}, -1, 3)} {
		b := infer.NewBuilder()
		ia, ic := b.Input(tensor.Float32, 30, 16), b.Input(tensor.Float32, 30, 8)
		var y infer.Ref
		if op.Name() == "linear_concat" {
			y = b.Op(op, ia, ic, b.Const(w))
		} else {
			y = b.Op(op, ia, b.Const(f))
		}
		g, err := b.Graph(y)
		require.NoError(t, err)
		p, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{}})
		require.NoError(t, err)
		var ex strings.Builder
		require.NoError(t, p.Explain(&ex))
		require.Contains(t, ex.String(), "dynamically quantized to int8")
		out, err := p.Forward(a, c)
		require.NoError(t, err)
		require.Zero(t, testing.AllocsPerRun(10, func() {
			if err := p.Run(out[0], a, c); err != nil {
				t.Fatal(err)
			}
		}), op.Name())
	}
}
