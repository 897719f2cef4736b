package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The recurrent ops keep their activations in scratch buffers between
// Forward and Backward and give them back at Free (ops.Freer): Backward
// after Free is an error naming the op, a second Forward computes afresh,
// and Free twice is harmless. Backward reads what Forward saved, so the
// gradients of a run that freed another op's buffers in between are the
// same as those of a fresh op.
func TestRecurrentOpsFreeTheirActivations(t *testing.T) {
	tests := []struct {
		name string
		op   func() Op
		in   []*tensor.Tensor
	}{
		{"lstm", func() Op { return LSTMOp(LSTMAttrs{Offsets: raggedOffsets}) },
			ins(randn(1, 8, 3), randn(2, 3, 8), randn(3, 2, 8), randn(4, 8))},
		{"lstm_projected", func() Op { return LSTMProjectedOp(LSTMAttrs{Offsets: raggedOffsets, Reverse: true}) },
			ins(randn(5, 8, 8), randn(6, 2, 8), randn(7, 8))},
		{"gru", func() Op { return GRUOp(GRUAttrs{Offsets: raggedOffsets, ResetAfter: true}) },
			ins(randn(8, 8, 3), randn(9, 3, 6), randn(10, 2, 6), randn(11, 2, 6))},
		{"gru_reset_before", func() Op { return GRUOp(GRUAttrs{Offsets: raggedOffsets}) },
			ins(randn(12, 8, 3), randn(13, 3, 6), randn(14, 2, 6), randn(15, 6))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			need := make([]bool, len(tc.in))
			for i := range need {
				need[i] = true
			}
			ones := func(out *tensor.Tensor) *tensor.Tensor {
				g := tensor.ZerosLike(out)
				g.Fill(1)
				return g
			}
			backward := func(op Op) []*tensor.Tensor {
				out, err := op.Forward(tc.in)
				require.NoError(t, err)
				gout := ones(out)
				grads, err := op.Backward(tc.in, out, gout, need)
				require.NoError(t, err)
				return grads
			}
			want := backward(tc.op())

			op := tc.op()
			out, err := op.Forward(tc.in)
			require.NoError(t, err)
			f, ok := op.(Freer)
			require.True(t, ok, "a recurrent op is a Freer")
			f.Free()
			f.Free()
			_, err = op.Backward(tc.in, out, ones(out), need)
			require.ErrorContains(t, err, op.Name()+": ")
			require.ErrorContains(t, err, "freed")

			other := tc.op() // its buffers come back dirty from the pool
			_, err = other.Forward(tc.in)
			require.NoError(t, err)
			other.(Freer).Free()
			got := backward(op) // a second Forward of the freed op
			for i := range want {
				require.Equal(t, want[i].Float64s(), got[i].Float64s(), "input %d", i)
			}
		})
	}
}
