package infer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The plan's fused ops refuse inputs and outputs other than those they
// were compiled for with an error naming the op, zero values included,
// and never panic.
func TestFusedOpsRefuseBadInputs(t *testing.T) {
	relu := newChain([]stage{{op: ops.UnaryOp("relu"), other: -1}}, tensor.Shape{2, 3}, []tensor.Shape{{2, 3}}, 0)
	add := newChain([]stage{{op: ops.BinaryOp("add"), other: 1, first: true}}, tensor.Shape{2, 3}, []tensor.Shape{{2, 3}, {3}}, 0)
	pool := &seqPoolConcatOp{name: "seqpool_concat[pool_sum]", rows: 2, total: 3,
		branches: []poolBranch{{pool: ops.SequencePoolSum, offsets: []int{0, 1, 4}, lo: 0, hi: 1, width: 3, rows: 4}}}
	f32 := func(shape ...int) *tensor.Tensor { return tensor.Zeros(tensor.Float32, shape...) }
	for _, op := range []interface {
		ops.Op
		ops.Into
	}{&chainOp{}, &seqPoolConcatOp{}, relu, add, pool} {
		for _, in := range [][]*tensor.Tensor{nil, {nil}, {f32(3, 2)}, {tensor.Zeros(tensor.Int64, 2, 3)}, {f32(2, 3), f32(4)}, {f32(2, 3), nil}} {
			require.Error(t, op.ForwardInto(f32(2, 3), in), "%s on %v", op.Name(), in)
			_, err := op.Forward(in)
			require.Error(t, err, "%s on %v", op.Name(), in)
		}
	}
	require.ErrorContains(t, relu.ForwardInto(f32(3, 2), []*tensor.Tensor{f32(2, 3)}), "elementwise(relu)")
	require.ErrorContains(t, pool.ForwardInto(nil, []*tensor.Tensor{f32(4, 3)}), "seqpool_concat[pool_sum]")
	require.NoError(t, add.ForwardInto(f32(2, 3), []*tensor.Tensor{f32(2, 3), f32(3)}))
	require.NoError(t, pool.ForwardInto(f32(2, 3), []*tensor.Tensor{f32(4, 3)}))
}
