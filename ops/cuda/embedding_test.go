//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// tolExact is for kernels that only move floats, or add them in ops'
// order in float32: they must match the CPU bit for bit.
var tolExact = tol{}

func TestEmbedding(t *testing.T) {
	rng := tensor.NewRNG(42)
	const v = 17
	for _, padding := range []int{ops.NoPadding, 0, 3} {
		for _, ids := range [][]int{{5}, {3, 7}, {0}, {1}, {2, 1, 4}} {
			for _, dim := range []int{1, 3, 127} {
				t.Run(fmt.Sprint(padding, ids, dim), func(t *testing.T) {
					n := tensor.Shape(ids).Size()
					idv := make([]int64, n)
					for i := range idv { // few distinct ids, so rows repeat, and the padding id among them
						idv[i] = int64(rng.IntN(6))
					}
					idt := tensor.MustFromSlice(idv, ids...)
					table, gout := randn(t, rng, v, dim), randn(t, rng, append(ids, dim)...)
					in := []*tensor.Tensor{table, idt}
					op := ops.EmbeddingOp(padding)
					want, grads := cpuOp(t, op, in, gout, []bool{true, false})
					rows, vals, ok := op.(ops.SparseGrader).SparseGrad(in, gout, 0)
					require.True(t, ok)

					o := dev.embeddingOp(padding)
					y, err := o.Forward(up(t, table), idt)
					require.NoError(t, err)
					defer y.Free()
					requireClose(t, want, y, tolExact, "forward")
					gb := up(t, gout)
					dense, err := o.Backward(gb)
					require.NoError(t, err)
					defer dense.Free()
					requireClose(t, grads[0], dense, tolExact, "dense gradient")
					grows, gvals, err := o.SparseGrad(gb)
					require.NoError(t, err)
					defer gvals.Free()
					require.Equal(t, rows, grows)
					requireClose(t, vals, gvals, tolExact, "sparse gradient")
				})
			}
		}
	}
	table := up(t, randn(t, rng, 4, 2))
	o := dev.embeddingOp(ops.NoPadding)
	_, err := o.Forward(table, tensor.MustFromSlice([]int32{1, 4}))
	require.ErrorContains(t, err, "id 4 at position 1 out of range [0, 4)")
	_, err = ops.Run(ops.EmbeddingOp(ops.NoPadding), onDevice(t, randn(t, rng, 4, 2)), onDevice(t, tensor.MustFromSlice([]float32{1})))
	require.ErrorContains(t, err, "int32 or int64 ids") // ops.Dispatch's check (embeddingOp.Check)
}

// BenchmarkEmbeddingSparseGrad is the table gradient of a lookup of 32×20
// ids in a [100000, 64] table (the layers' BenchmarkEmbeddingStep shape)
// in its sparse form: the touched rows only, no [V, D] buffer.
func BenchmarkEmbeddingSparseGrad(b *testing.B) {
	ids := make([]int64, 32*20)
	rng := tensor.NewRNG(1)
	for i := range ids {
		ids[i] = int64(rng.IntN(100000))
	}
	table, gout := upB(b, 100000, 64), upB(b, 32, 20, 64)
	o := dev.embeddingOp(ops.NoPadding)
	y, err := o.Forward(table, tensor.MustFromSlice(ids, 32, 20))
	if err != nil {
		b.Fatal(err)
	}
	defer y.Free()
	b.ResetTimer()
	for b.Loop() {
		_, vals, err := o.SparseGrad(gout)
		if err != nil {
			b.Fatal(err)
		}
		vals.Free()
	}
}
