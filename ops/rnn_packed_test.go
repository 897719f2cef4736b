package ops

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// packedRNNCase is a recurrent op and its inputs for the packed-weights
// tests; ref, where set, is the plain formula's output in float64.
type packedRNNCase struct {
	name string
	op   func() Op
	in   []*tensor.Tensor
	ref  func(in []*tensor.Tensor) *tensor.Tensor
}

// packedRNNCases covers every recurrent op on odd shapes: batch 1, odd
// hidden sizes and input widths, ragged batches with an empty and a
// length-1 sequence, reverse, initial states and peepholes, and a batch of
// 40 sequences that splits over the cores (rnnSchedule.split).
func packedRNNCases() []packedRNNCase {
	long := []int{0}
	for i := range 40 {
		long = append(long, long[i]+1+(i*11)%13)
	}
	tl := long[40]
	return []packedRNNCase{
		{"lstm_batch1", func() Op { return LSTMOp(LSTMAttrs{Offsets: []int{0, 6}}) },
			ins(randn(1, 6, 5), randn(2, 5, 4*37), randn(3, 37, 4*37), randn(4, 4*37)),
			func(in []*tensor.Tensor) *tensor.Tensor {
				return plainLSTM(in[0], in[1], in[2], in[3], nil, nil, nil, []int{0, 6}, false)
			}},
		{"lstm_ragged_peephole_init", func() Op { return LSTMOp(LSTMAttrs{Offsets: raggedOffsets, Reverse: true}) },
			ins(randn(5, 8, 3), randn(6, 3, 4*5), randn(7, 5, 4*5), randn(8, 4*5), randn(9, 3*5), randn(10, 4, 5), randn(11, 4, 5)),
			func(in []*tensor.Tensor) *tensor.Tensor {
				return plainLSTM(in[0], in[1], in[2], in[3], in[4], in[5], in[6], raggedOffsets, true)
			}},
		{"lstm_split", func() Op { return LSTMOp(LSTMAttrs{Offsets: long}) },
			ins(randn(12, tl, 7), randn(13, 7, 4*19), randn(14, 19, 4*19), randn(15, 4*19)), nil},
		{"lstm_projected", func() Op { return LSTMProjectedOp(LSTMAttrs{Offsets: raggedOffsets, Reverse: true}) },
			ins(randn(16, 8, 4*9), randn(17, 9, 4*9), randn(18, 4*9)), nil},
		{"lstm_cell", func() Op { return LSTMCellOp() },
			ins(randn(19, 3, 4), randn(20, 3, 11), randn(21, 3, 11), randn(22, 4, 4*11), randn(23, 11, 4*11), randn(24, 4*11)), nil},
		{"gru_reset_after", func() Op { return GRUOp(GRUAttrs{Offsets: raggedOffsets, ResetAfter: true}) },
			ins(randn(25, 8, 3), randn(26, 3, 3*13), randn(27, 13, 3*13), randn(28, 2, 3*13), randn(29, 4, 13)),
			func(in []*tensor.Tensor) *tensor.Tensor {
				return plainGRU(in[0], in[1], in[2], in[3], in[4], raggedOffsets, false, true)
			}},
		{"gru_reset_before_split", func() Op { return GRUOp(GRUAttrs{Offsets: long, Reverse: true}) },
			ins(randn(30, tl, 6), randn(31, 6, 3*17), randn(32, 17, 3*17), randn(33, 3*17)), nil},
		{"gru_cell", func() Op { return GRUCellOp(true) },
			ins(randn(34, 1, 5), randn(35, 1, 7), randn(36, 5, 3*7), randn(37, 7, 3*7), randn(38, 2, 3*7)), nil},
	}
}

// The op PackRecurrentWeights returns, given every input as a constant,
// computes what the unpacked op computes, bit for bit, forward (Forward
// and ForwardInto) and backward, in both dtypes on one core and on two;
// and both agree with the plain formulas where the case has them.
func TestPackRecurrentWeightsMatchesUnpacked(t *testing.T) {
	for _, c := range packedRNNCases() {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			for _, procs := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/%v/procs%d", c.name, dt, procs), func(t *testing.T) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					in := c.in
					if dt == tensor.Float32 {
						in = make([]*tensor.Tensor, len(c.in))
						for i, x := range c.in {
							in[i] = f32(x)
						}
					}
					packed, ok, err := PackRecurrentWeights(c.op(), in)
					require.NoError(t, err)
					require.True(t, ok)
					need := make([]bool, len(in))
					for i := range need {
						need[i] = true
					}
					run := func(op Op) []*tensor.Tensor {
						y, err := op.Forward(in)
						require.NoError(t, err)
						into, err := tensor.Full(dt, 7, y.Shape()...) // ForwardInto writes every element
						require.NoError(t, err)
						require.NoError(t, op.(Into).ForwardInto(into, in))
						dy := randn(39, y.Shape()...)
						if dt == tensor.Float32 {
							dy = f32(dy)
						}
						g, err := op.Backward(in, y, dy, need)
						require.NoError(t, err)
						return append([]*tensor.Tensor{y, into}, g...)
					}
					want, got := run(c.op()), run(packed)
					for i := range want {
						require.Equal(t, want[i].Raw(), got[i].Raw(), "output %d", i)
					}
					require.Equal(t, want[0].Raw(), want[1].Raw(), "Forward and ForwardInto")
					if c.ref != nil && dt == tensor.Float64 {
						requireClose(t, c.ref(in), got[0], 1e-13, 1e-12)
					}
				})
			}
		}
	}
}

// A packed op given other weights than the ones it packed runs as the
// unpacked op on them; PackRecurrentWeights leaves other ops, ops without
// constant kernels and miscounted inputs alone, with no error.
func TestPackRecurrentWeightsFallsBack(t *testing.T) {
	x, w, u, b := randn(1, 8, 3), randn(2, 3, 4*5), randn(3, 5, 4*5), randn(4, 4*5)
	attrs := LSTMAttrs{Offsets: raggedOffsets}
	packed, ok, err := PackRecurrentWeights(LSTMOp(attrs), ins(nil, w, u, nil))
	require.NoError(t, err)
	require.True(t, ok)
	w2, u2 := randn(5, 3, 4*5), randn(6, 5, 4*5)
	for _, in := range [][]*tensor.Tensor{ins(x, w2, u2, b), ins(x, w, u2, b), ins(x, w2, u, b)} {
		want, err := LSTMOp(attrs).Forward(in)
		require.NoError(t, err)
		got, err := packed.Forward(in)
		require.NoError(t, err)
		require.Equal(t, want.Raw(), got.Raw())
	}
	_, err = packed.Forward(ins(x, randn(7, 4, 4*5), u, b))
	require.ErrorContains(t, err, "lstm: ")

	for _, c := range []struct {
		name   string
		op     Op
		consts []*tensor.Tensor
	}{
		{"not recurrent", LinearOp(), ins(x, w)},
		{"no constant kernel", LSTMOp(attrs), ins(x, nil, nil, b)},
		{"lstm with 3 inputs", LSTMOp(attrs), ins(x, w, u)},
		{"lstm_cell with 4 inputs", LSTMCellOp(), ins(x, x, x, w)},
		{"gru with 3 inputs", GRUOp(GRUAttrs{Offsets: raggedOffsets}), ins(x, w, u)},
		{"gru_cell with 4 inputs", GRUCellOp(true), ins(x, x, w, u)},
		{"integer kernel", LSTMOp(attrs), ins(x, tensor.Zeros(tensor.Int64, 3, 20), tensor.Zeros(tensor.Int64, 5, 20), b)},
	} {
		t.Run(c.name, func(t *testing.T) {
			op, ok, err := PackRecurrentWeights(c.op, c.consts)
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Equal(t, c.op, op)
		})
	}
}
