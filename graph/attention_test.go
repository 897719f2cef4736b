package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The fused attention equals its composition softmax(q·kᵀ·scale + bias)·v
// with bias -1e9 at masked keys (Keras' form), forward and backward, as
// long as every query has some key.
func TestAttentionFusedEqualsComposition(t *testing.T) {
	lengths := []int{4, 2}
	bias := tensor.Zeros(tensor.Float64, 2, 1, 3, 4) // [B, H, Tq, Tk], broadcast over heads
	for b, l := range lengths {
		for i := 0; i < 3; i++ {
			for j := 0; j < 4; j++ {
				if j >= l || j > i {
					bias.SetAt((b*3+i)*4+j, -1e9)
				}
			}
		}
	}
	run := func(fused bool) (*tensor.Tensor, []*Value) {
		tape := NewTape()
		q, k, v := tape.Var(randn(1, 2, 2, 3, 5)), tape.Var(randn(2, 2, 2, 4, 5)), tape.Var(randn(3, 2, 2, 4, 3))
		var out *Value
		if fused {
			out = Attention(q, k, v, nil, ops.AttentionAttrs{KeyLengths: lengths, Causal: true, Scale: 0.5})
		} else {
			s := Add(Mul(MatMul(q, k, false, true), tape.Const(tensor.MustFromSlice([]float64{0.5}, 1))), tape.Const(bias))
			out = MatMul(Softmax(s, -1), v, false, false)
		}
		require.NoError(t, tape.Backward(weighted(out, 9)))
		o, err := out.Tensor()
		require.NoError(t, err)
		return o, []*Value{q, k, v}
	}
	requireSameRuns(t, run)
}

func TestPadSeq(t *testing.T) {
	tape := NewTape()
	x := tape.Var(tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2))
	p, lengths := PadSeq(Seq{x, []int{0, 3, 3, 4}})
	require.Equal(t, []int{3, 0, 1}, lengths)
	pt, err := p.Tensor()
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{3, 3, 2}, pt.Shape())
	require.Equal(t, []float64{1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 7, 8, 0, 0, 0, 0}, pt.Float64s())
	require.NoError(t, tape.Backward(Sum(p)))
	require.Equal(t, []float64{1, 1, 1, 1, 1, 1, 1, 1}, x.Grad().Float64s())
	bad, _ := PadSeq(Seq{tape.Const(randn(1, 2, 2, 2)), []int{0, 2}})
	require.ErrorContains(t, bad.Err(), "graph: PadSeq of values float64[2 2 2]; want [total, D]")
	require.ErrorContains(t, Attention(p, p, p, nil, ops.AttentionAttrs{KeyLengths: []int{1}}).Err(), "attention: inputs")
}
