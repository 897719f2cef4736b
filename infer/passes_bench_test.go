package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// passGraph is a graph on which one fusion pass fires, with an input.
type passGraph struct {
	name string
	g    *infer.Graph
	in   []*tensor.Tensor
}

// passGraphs returns one graph per new pass, each sized like the layer it
// stands for: a ResNet-style input normalisation and activation chain on a
// batch of 64 CIFAR images, Fluid's CTR-style eight sum/average pools of
// 64-wide slot embeddings and their concat at batch 64, a 512→512→64
// linear pair, and an attention-style matmul of a transposed operand.
func passGraphs(t testing.TB) []passGraph {
	var gs []passGraph
	{
		b := infer.NewBuilder()
		x := b.Input(tensor.Float32, 64, 3, 32, 32)
		h := b.Op(ops.BinaryOp("sub"), x, b.Const(randRange(t, 1, 0, 1, 1, 3, 1, 1)))
		h = b.Op(ops.BinaryOp("div"), h, b.Const(randRange(t, 2, 0.5, 1, 1, 3, 1, 1)))
		h = b.Op(ops.UnaryOp("tanh"), h)
		g, err := b.Graph(b.Op(ops.UnaryOp("relu"), h))
		require.NoError(t, err)
		gs = append(gs, passGraph{"chain_sub_div_tanh_relu", g, []*tensor.Tensor{randRange(t, 3, -1, 1, 64, 3, 32, 32)}})
	}
	{
		lens := lengths(64)
		for i := range lens {
			lens[i] += 10
		}
		off := offsets(lens)
		b := infer.NewBuilder()
		var ins []*tensor.Tensor
		var pools []infer.Ref
		for s := 0; s < 8; s++ {
			x := b.Input(tensor.Float32, off[len(off)-1], 64)
			ins = append(ins, randRange(t, uint64(10+s), -1, 1, off[len(off)-1], 64))
			kind := []ops.SequencePoolType{ops.SequencePoolSum, ops.SequencePoolAverage}[s%2]
			pools = append(pools, b.Op(ops.SequencePoolOp(kind, 0, off), x))
		}
		g, err := b.Graph(b.Op(ops.ConcatOp(1), pools...))
		require.NoError(t, err)
		gs = append(gs, passGraph{"seqpool_concat_8x64", g, ins})
	}
	{
		b := infer.NewBuilder()
		x := b.Input(tensor.Float32, 64, 512)
		h := b.Op(ops.LinearOp(), x, b.Const(randRange(t, 1, -0.05, 0.05, 512, 512)), b.Const(randRange(t, 2, -1, 1, 512)))
		g, err := b.Graph(b.Op(ops.LinearOp(), h, b.Const(randRange(t, 3, -0.05, 0.05, 512, 64))))
		require.NoError(t, err)
		gs = append(gs, passGraph{"linear_512_512_64", g, []*tensor.Tensor{randRange(t, 4, -1, 1, 64, 512)}})
	}
	{
		b := infer.NewBuilder()
		q := b.Input(tensor.Float32, 8, 128, 64)
		k := b.Input(tensor.Float32, 8, 128, 64)
		g, err := b.Graph(b.Op(ops.MatMulOp(false, false), q, b.Op(ops.TransposeOp(0, 2, 1), k)))
		require.NoError(t, err)
		gs = append(gs, passGraph{"transpose_matmul_8x128x64", g, []*tensor.Tensor{randRange(t, 5, -1, 1, 8, 128, 64), randRange(t, 6, -1, 1, 8, 128, 64)}})
	}
	return gs
}

// BenchmarkPasses times each new pass's graph compiled without and with
// the fusion passes, one after the other, in wall and CPU time; run with
// -cpu 1,2 and -count for interleaved rounds.
func BenchmarkPasses(b *testing.B) {
	for _, pg := range passGraphs(b) {
		for _, v := range []struct {
			name string
			opts infer.Options
		}{{"unfused", infer.Options{NoFusion: true}}, {"fused", infer.Options{}}} {
			b.Run(pg.name+"/"+v.name, func(b *testing.B) {
				p, err := pg.g.Compile(v.opts)
				require.NoError(b, err)
				out := tensor.Empty(p.Outputs()[0].DType, p.Outputs()[0].Shape...)
				require.NoError(b, p.Run(out, pg.in...))
				b.ReportAllocs()
				start := cpuNanos()
				for b.Loop() {
					if err := p.Run(out, pg.in...); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, start)
			})
		}
	}
}

// The benchmark graphs compile and their fused plans match the unfused
// ones, each with its pass fired.
func TestPassGraphs(t *testing.T) {
	want := []string{"elementwise chains as one loop: 1", "sequence pools and their concat as one op: 1",
		"consecutive linear layers folded into one: 1", "transposes and copies absorbed: 1"}
	for i, pg := range passGraphs(t) {
		fusedMatchesUnfused(t, pg.g, pg.in, want[i])
	}
}
