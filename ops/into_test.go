package ops

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// intoCases are ops with ForwardInto on random and odd shapes, in both
// dtypes (float32 cases cast from the float64 inputs).
var intoCases = []struct {
	name string
	op   func() Op
	in   []*tensor.Tensor
}{
	{"relu", func() Op { return UnaryOp("relu") }, ins(randn(1, 3, 7, 5))},
	{"tanh", func() Op { return UnaryOp("tanh") }, ins(randn(2, 13))},
	{"add", func() Op { return BinaryOp("add") }, ins(randn(3, 4, 9), randn(4, 4, 9))},
	{"add_broadcast", func() Op { return BinaryOp("add") }, ins(randn(5, 4, 9), randn(6, 9))},
	{"maximum", func() Op { return BinaryOp("maximum") }, ins(randn(7, 3, 5), randn(8, 3, 5))},
	{"softmax", func() Op { return SoftmaxOp(-1) }, ins(randn(9, 5, 11))},
	{"log_softmax_axis1", func() Op { return LogSoftmaxOp(1) }, ins(randn(10, 2, 7, 3))},
	{"matmul_batched_tb", func() Op { return MatMulOp(false, true) }, ins(randn(11, 3, 5, 7), randn(12, 3, 9, 7))},
	{"linear_bias", func() Op { return LinearOp() }, ins(randn(13, 2, 3, 17), randn(14, 17, 11), randn(15, 11))},
	{"linear_row", func() Op { return LinearOp() }, ins(randn(16, 1, 33), randn(17, 33, 19))},
	{"conv2d_pad_stride", func() Op {
		return Conv2DOp(Conv2DAttrs{Stride: [2]int{2, 1}, Pad: [4]int{1, 0, 2, 1}})
	}, ins(randn(18, 2, 3, 9, 7), randn(19, 5, 3, 3, 2), randn(20, 5))},
	{"conv2d_grid_same", func() Op { return Conv2DOp(Conv2DAttrs{Padding: PadSame}) },
		ins(randn(21, 1, 16, 10, 10), randn(22, 16, 16, 3, 3))},
	{"conv2d_depthwise", func() Op { return Conv2DOp(Conv2DAttrs{Groups: 4, Pad: [4]int{1, 1, 1, 1}}) },
		ins(randn(23, 2, 4, 6, 5), randn(24, 4, 1, 3, 3), randn(25, 4))},
	{"max_pool", func() Op { return MaxPool2DOp(Pool2DAttrs{Kernel: [2]int{2, 2}}) }, ins(randn(26, 2, 3, 9, 8))},
	{"reshape", func() Op { return ReshapeOp(3, -1) }, ins(randn(28, 2, 3, 5))},
	{"global_avg_pool", func() Op { return GlobalAvgPool2DOp() }, ins(randn(29, 2, 3, 5, 3))},
	{"concat_axis1", func() Op { return ConcatOp(1) }, ins(randn(30, 2, 3, 4), randn(31, 2, 1, 4), randn(32, 2, 5, 4))},
	{"sequence_pool_max", func() Op { return SequencePoolOp(SequencePoolMax, 0, []int{0, 2, 2, 7}) }, ins(randn(35, 7, 3))},
	{"sequence_pool_average", func() Op { return SequencePoolOp(SequencePoolAverage, -1, []int{0, 0, 4, 5}) }, ins(randn(36, 5, 2, 2))},
	{"concat_last", func() Op { return ConcatOp(-1) }, ins(randn(33, 3, 2), randn(34, 3, 7))},
	{"slice_axis1", func() Op { return SliceOp(1, 2, 5) }, ins(randn(37, 3, 7, 5))},
	{"slice_last_empty", func() Op { return SliceOp(-1, 4, 4) }, ins(randn(38, 2, 3, 9))},
	{"slice_rows", func() Op { return SliceOp(0, 1, 6) }, ins(randn(39, 7, 3))},
	{"linear_concat_bias", func() Op { return LinearConcatOp() }, ins(randn(40, 2, 5, 7), randn(41, 2, 5, 3), randn(42, 10, 9), randn(43, 9))},
	{"linear_concat_row", func() Op { return LinearConcatOp() }, ins(randn(44, 1, 13), randn(45, 1, 6), randn(46, 19, 11))},
	{"rnn_final_state", func() Op { return RNNFinalStateOp([]int{0, 3, 3, 4, 9}, false) }, ins(randn(47, 9, 5))},
	{"rnn_final_state_init_reverse", func() Op { return RNNFinalStateOp([]int{0, 0, 2, 7}, true) }, ins(randn(48, 7, 3), randn(49, 3, 3))},
	{"sequence_conv_pool_max_pad", func() Op { return SequenceConvPoolMaxOp([]int{0, 3, 3, 8, 9}, -1, 3) },
		ins(randn(50, 9, 4), randn(51, 12, 5), randn(52, SequenceConvPadRows(-1, 3), 4))},
	{"sequence_conv_pool_max_zero_pad", func() Op { return SequenceConvPoolMaxOp([]int{0, 0, 5, 6}, 0, 2) },
		ins(randn(53, 6, 3), randn(54, 6, 7))},
	{"lstm_ragged", func() Op { return LSTMOp(LSTMAttrs{Offsets: []int{0, 3, 3, 4, 9}}) },
		ins(randn(55, 9, 5), randn(56, 5, 12), randn(57, 3, 12), randn(58, 12))},
	{"lstm_peephole_state_reverse", func() Op { return LSTMOp(LSTMAttrs{Offsets: []int{0, 0, 6, 7}, Reverse: true}) },
		ins(randn(59, 7, 2), randn(60, 2, 20), randn(61, 5, 20), randn(62, 20), randn(63, 15), randn(64, 3, 5), randn(65, 3, 5))},
	{"lstm_cell", func() Op { return LSTMCellOp() },
		ins(randn(66, 3, 4), randn(67, 3, 2), randn(68, 3, 2), randn(69, 4, 8), randn(70, 2, 8), randn(71, 8))},
	{"lstm_projected", func() Op { return LSTMProjectedOp(LSTMAttrs{Offsets: []int{0, 2, 7}}) },
		ins(randn(72, 7, 12), randn(73, 3, 12), randn(74, 12))},
	{"gru_ragged", func() Op { return GRUOp(GRUAttrs{Offsets: []int{0, 4, 4, 5, 11}}) },
		ins(randn(75, 11, 3), randn(76, 3, 15), randn(77, 5, 15), randn(78, 15))},
	{"gru_reset_after_state_reverse", func() Op { return GRUOp(GRUAttrs{Offsets: []int{0, 1, 1, 8}, Reverse: true, ResetAfter: true}) },
		ins(randn(79, 8, 6), randn(80, 6, 9), randn(81, 3, 9), randn(82, 2, 9), randn(83, 3, 3))},
	{"gru_cell", func() Op { return GRUCellOp(false) },
		ins(randn(84, 2, 3), randn(85, 2, 4), randn(86, 3, 12), randn(87, 4, 12), randn(88, 12))},
	{"avg_pool_same", func() Op {
		return AvgPool2DOp(Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Padding: PadSame})
	}, ins(randn(27, 1, 2, 7, 5))},
}

// ForwardInto writes what Forward returns, into a tensor the caller owns
// (filled with garbage first), in both dtypes.
func TestForwardIntoMatchesForward(t *testing.T) {
	for _, c := range intoCases {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			t.Run(c.name+"/"+dt.String(), func(t *testing.T) {
				in := castAll(t, c.in, dt)
				want, err := c.op().Forward(in)
				require.NoError(t, err)
				out := tensor.Empty(dt, want.Shape()...)
				out.Fill(7)
				op := c.op()
				require.Implements(t, (*Into)(nil), op)
				require.NoError(t, op.(Into).ForwardInto(out, in))
				require.Equal(t, want.Shape(), out.Shape())
				for i := 0; i < want.Size(); i++ {
					require.InDelta(t, want.At(i), out.At(i), 1e-6, "element %d", i)
				}
			})
		}
	}
}

func castAll(t *testing.T, in []*tensor.Tensor, dt tensor.DType) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(in))
	for i, x := range in {
		c, err := x.Cast(dt)
		require.NoError(t, err)
		out[i] = c
	}
	return out
}

// One op value serves many goroutines at once (run under -race).
func TestForwardIntoConcurrent(t *testing.T) {
	for _, c := range intoCases {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.op().Forward(c.in)
			require.NoError(t, err)
			op := c.op().(Into)
			var wg sync.WaitGroup
			outs := make([]*tensor.Tensor, 4)
			errs := make([]error, len(outs))
			for g := range outs {
				outs[g] = tensor.Empty(want.DType(), want.Shape()...)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 3 {
						if errs[g] = op.ForwardInto(outs[g], c.in); errs[g] != nil {
							return
						}
					}
				}()
			}
			wg.Wait()
			for g, out := range outs {
				require.NoError(t, errs[g])
				require.Equal(t, want.Float64s(), out.Float64s())
			}
		})
	}
}

// A wrong output (shape, dtype, nil) or bad inputs are errors naming the op.
func TestForwardIntoErrors(t *testing.T) {
	x := randn(1, 2, 3)
	cases := []struct {
		op   Op
		in   []*tensor.Tensor
		out  *tensor.Tensor
		want string
	}{
		{UnaryOp("relu"), ins(x), tensor.Empty(tensor.Float64, 3, 2), "relu: inputs float64[2 3]: ForwardInto an output float64[3 2]; want a host tensor float64[2 3]"},
		{UnaryOp("relu"), ins(x), tensor.Empty(tensor.Float32, 2, 3), "want a host tensor float64[2 3]"},
		{UnaryOp("relu"), ins(x), nil, "ForwardInto a nil output"},
		{BinaryOp("add"), ins(x, randn(2, 4)), tensor.Empty(tensor.Float64, 2, 3), "add: inputs float64[2 3], float64[4]"},
		{LinearOp(), ins(x, randn(3, 3, 4)), tensor.Empty(tensor.Float64, 2, 5), "want a host tensor float64[2 4]"},
		{LinearOp(), ins(x, randn(3, 3, 4)), nil, "linear: inputs float64[2 3], float64[3 4]: ForwardInto a nil output"},
		{LinearOp(), ins(x, randn(3, 2, 4)), tensor.Empty(tensor.Float64, 2, 4), "want x [..., in] and w [in, out]"},
		{Conv2DOp(Conv2DAttrs{}), ins(randn(4, 1, 1, 4, 4), randn(5, 2, 1, 3, 3)), tensor.Empty(tensor.Float64, 1, 2, 3, 3), "want a host tensor float64[1 2 2 2]"},
		{MaxPool2DOp(Pool2DAttrs{Kernel: [2]int{2, 2}}), ins(randn(6, 1, 1, 4, 4)), tensor.Empty(tensor.Float64, 1, 1, 3, 2), "want a host tensor float64[1 1 2 2]"},
		{SoftmaxOp(3), ins(x), tensor.Empty(tensor.Float64, 2, 3), "softmax"},
		{MatMulOp(false, false), ins(x, randn(7, 3, 2)), tensor.Empty(tensor.Float64, 2, 3), "want a host tensor float64[2 2]"},
		{SliceOp(1, 1, 3), ins(x), tensor.Empty(tensor.Float64, 2, 3), "slice: inputs float64[2 3]: ForwardInto an output float64[2 3]; want a host tensor float64[2 2]"},
		{SliceOp(1, 1, 3), ins(x), tensor.Empty(tensor.Float32, 2, 2), "want a host tensor float64[2 2]"},
		{SliceOp(1, 1, 3), ins(x), nil, "slice: inputs float64[2 3]: ForwardInto a nil output"},
		{SliceOp(1, 2, 4), ins(x), tensor.Empty(tensor.Float64, 2, 2), "tensor: slice [2,4) of axis 1 of shape [2 3]"},
		{LinearConcatOp(), ins(x, randn(8, 2, 1), randn(9, 4, 5)), tensor.Empty(tensor.Float64, 2, 4), "want a host tensor float64[2 5]"},
		{LinearConcatOp(), ins(x, randn(8, 2, 1), randn(9, 4, 5)), nil, "linear_concat: inputs float64[2 3], float64[2 1], float64[4 5]: ForwardInto a nil output"},
		{RNNFinalStateOp([]int{0, 1, 2}, false), ins(x), tensor.Empty(tensor.Float64, 2, 2), "rnn_final_state: inputs float64[2 3]: ForwardInto an output float64[2 2]; want a host tensor float64[2 3]"},
		{RNNFinalStateOp([]int{0, 1, 3}, false), ins(x), tensor.Empty(tensor.Float64, 2, 3), "rnn_final_state"},
		{RNNFinalStateOp([]int{0, 1, 2}, false), ins(x, randn(10, 3, 3)), tensor.Empty(tensor.Float64, 2, 3), "want init [2 3]"},
		{SequenceConvPoolMaxOp([]int{0, 1, 2}, 0, 1), ins(x, randn(11, 3, 4)), tensor.Empty(tensor.Float64, 2, 3), "sequence_conv_pool_max: inputs float64[2 3], float64[3 4]: ForwardInto an output float64[2 3]; want a host tensor float64[2 4]"},
		{SequenceConvPoolMaxOp([]int{0, 1, 2}, 0, 1), ins(x, randn(11, 3, 4)), nil, "ForwardInto a nil output"},
		{SequenceConvPoolMaxOp([]int{0, 1, 2}, 0, 2), ins(x, randn(11, 3, 4)), tensor.Empty(tensor.Float64, 2, 4), "want x [total, D] and filter [contextLength·D, out] with contextLength 2"},
		{LSTMOp(LSTMAttrs{Offsets: []int{0, 1, 2}}), ins(x, randn(12, 3, 4), randn(13, 1, 4), randn(14, 4)), tensor.Empty(tensor.Float64, 2, 1), "lstm: inputs float64[2 3], float64[3 4], float64[1 4], float64[4]: ForwardInto an output float64[2 1]; want a host tensor float64[2 2]"},
		{LSTMOp(LSTMAttrs{Offsets: []int{0, 1, 3}}), ins(x, randn(12, 3, 4), randn(13, 1, 4), randn(14, 4)), tensor.Empty(tensor.Float64, 2, 2), "lstm"},
		{LSTMOp(LSTMAttrs{Offsets: []int{0, 1, 2}}), ins(x, randn(12, 3, 4), randn(13, 2, 4), randn(14, 4)), tensor.Empty(tensor.Float64, 2, 2), "want U [1 4] for W [3 4]"},
		{GRUOp(GRUAttrs{Offsets: []int{0, 1, 2}}), ins(x, randn(15, 3, 6), randn(16, 2, 6), randn(17, 6)), nil, "gru: inputs float64[2 3], float64[3 6], float64[2 6], float64[6]: ForwardInto a nil output"},
		{GRUOp(GRUAttrs{Offsets: []int{0, 1, 2}}), ins(x, randn(15, 3, 6), randn(16, 2, 6), randn(17, 6)), tensor.Empty(tensor.Float32, 2, 2), "want a host tensor float64[2 2]"},
		{GRUOp(GRUAttrs{Offsets: []int{0, 1, 2}, ResetAfter: true}), ins(x, randn(15, 3, 6), randn(16, 2, 6), randn(17, 6)), tensor.Empty(tensor.Float64, 2, 2), "want bias [2 6] (input, recurrent) with reset_after"},
		{LinearConcatOp(), ins(x, randn(8, 2, 1), randn(9, 5, 5)), tensor.Empty(tensor.Float64, 2, 5), "want w [4, out] (ka + kb rows)"},
	}
	for _, c := range cases {
		err := c.op.(Into).ForwardInto(c.out, c.in)
		require.ErrorContains(t, err, c.want)
	}
}

// Embedding's ForwardInto looks up int32 and int64 ids (the padding id's
// rows zero, whatever out held) as Forward does, and checks the ids.
func TestEmbeddingForwardInto(t *testing.T) {
	table := randn(1, 7, 3)
	for _, ids := range []*tensor.Tensor{
		tensor.MustFromSlice([]int32{0, 6, 2, 2, 5}, 5),
		tensor.MustFromSlice([]int64{1, 2, 3, 6, 0, 2}, 2, 3),
	} {
		op := EmbeddingOp(2)
		want, err := op.Forward(ins(table, ids))
		require.NoError(t, err)
		out := tensor.Empty(tensor.Float64, want.Shape()...)
		out.Fill(9)
		require.NoError(t, EmbeddingOp(2).(Into).ForwardInto(out, ins(table, ids)))
		require.Equal(t, want.Float64s(), out.Float64s())
	}
	bad := tensor.MustFromSlice([]int64{1, 7}, 2)
	require.ErrorContains(t, EmbeddingOp(-1).(Into).ForwardInto(tensor.Empty(tensor.Float64, 2, 3), ins(table, bad)), "id 7 at position 1 out of range [0, 7)")
	require.ErrorContains(t, EmbeddingOp(-1).(Into).ForwardInto(tensor.Empty(tensor.Float64, 2, 4), ins(table, tensor.MustFromSlice([]int64{1, 2}, 2))), "want a host tensor float64 of the ids' shape and 3 columns")
}

// Slice's ForwardInto copies integer tensors too, as Forward does.
func TestSliceForwardIntoInts(t *testing.T) {
	x := tensor.MustFromSlice([]int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 2, 3, 2)
	out := tensor.Empty(tensor.Int64, 2, 2, 2)
	out.Fill(-1)
	require.NoError(t, SliceOp(1, 1, 3).(Into).ForwardInto(out, ins(x)))
	require.Equal(t, []int64{2, 3, 4, 5, 8, 9, 10, 11}, out.Int64s())
}
