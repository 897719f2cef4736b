//go:build !race

// The race detector makes sync.Pool (the kernels' scratch and jobs) drop
// items at random, so allocation counts mean nothing under -race; this
// file is built without it.

package ops

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// randf32 is a float32 tensor of normal values.
func randf32(seed uint64, shape ...int) *tensor.Tensor {
	t, err := tensor.RandNormal(tensor.NewRNG(seed), tensor.Float32, 0, 1, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// The forward kernels an inference plan runs allocate nothing per
// ForwardInto after warm-up, on 1 and 2 cores, small (serial) and large
// (parallel loops), float32 and float64: their parallel loops take pooled
// jobs and their scratch comes from pools. Each convolution case picks
// another algorithm (Winograd; the row and grid kernels, packed or not;
// grouped im2col). Winograd is tested packed only, as plans run it: an
// unpacked 3×3 convolution transforms and packs its filters at every call.
func TestForwardIntoAllocatesNothing(t *testing.T) {
	packedConv := func(w *tensor.Tensor, a Conv2DAttrs) Op {
		p, err := PackConvWeights(w, a)
		require.NoError(t, err)
		return Conv2DPackedOp(a, p)
	}
	packedLinear := func(w *tensor.Tensor) Op {
		p, err := PackWeights(w)
		require.NoError(t, err)
		return LinearPackedOp(p)
	}
	same := Conv2DAttrs{Padding: PadSame}
	w3, w5 := randf32(2, 16, 16, 3, 3), randf32(3, 16, 8, 5, 5)
	cases := []struct {
		name string
		op   Op
		in   []*tensor.Tensor
	}{
		{"conv2d/winograd/packed", packedConv(w3, same), ins(randf32(1, 8, 16, 32, 32), w3, randf32(4, 16))},
		{"conv2d/5x5", Conv2DOp(Conv2DAttrs{}), ins(randf32(5, 8, 8, 12, 12), w5, randf32(6, 16))},
		{"conv2d/5x5/packed", packedConv(w5, Conv2DAttrs{}), ins(randf32(5, 8, 8, 12, 12), w5, randf32(6, 16))},
		{"conv2d/stride2", Conv2DOp(Conv2DAttrs{Stride: [2]int{2, 2}, Padding: PadSame}), ins(randf32(7, 8, 16, 32, 32), w3)},
		{"conv2d/groups", Conv2DOp(Conv2DAttrs{Groups: 2}), ins(randf32(8, 3, 4, 9, 9), randf32(9, 6, 2, 3, 3))},
		{"conv2d/float64", Conv2DOp(same), ins(randn(10, 2, 3, 7, 7), randn(11, 5, 3, 3, 3), randn(12, 5))},
		{"max_pool2d", MaxPool2DOp(Pool2DAttrs{Kernel: [2]int{2, 2}}), ins(randf32(13, 8, 16, 32, 32))},
		{"avg_pool2d/3x3", AvgPool2DOp(Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [4]int{1, 1, 1, 1}}), ins(randf32(14, 4, 8, 15, 15))},
		{"relu", UnaryOp("relu"), ins(randf32(15, 64, 4096))},
		{"tanh/small", UnaryOp("tanh"), ins(randf32(16, 3, 5))},
		{"add", BinaryOp("add"), ins(randf32(17, 64, 4096), randf32(18, 64, 4096))},
		{"add/broadcast", BinaryOp("add"), ins(randf32(19, 64, 4096), randf32(20, 4096))},
		{"mul/broadcast/float64", BinaryOp("mul"), ins(randn(21, 3, 1, 5), randn(22, 4, 1))},
		{"softmax", SoftmaxOp(-1), ins(randf32(23, 64, 5000))},
		{"softmax/inner", SoftmaxOp(1), ins(randf32(24, 16, 10, 300))},
		{"linear", LinearOp(), ins(randf32(25, 64, 256), randf32(26, 256, 512), randf32(27, 512))},
		{"slice", SliceOp(1, 2, 7), ins(randf32(28, 6, 9, 4))},
		{"matmul", MatMulOp(false, true), ins(randf32(31, 64, 128), randf32(32, 96, 128))},
		{"matmul/batched", MatMulOp(false, false), ins(randf32(33, 4, 16, 32), randf32(34, 4, 32, 8))},
		{"linear/packed", packedLinear(randf32(35, 256, 512)), ins(randf32(36, 64, 256), randf32(35, 256, 512), randf32(37, 512))},
		{"linear_concat", LinearConcatOp(), ins(randf32(38, 64, 100), randf32(39, 64, 28), randf32(40, 128, 256), randf32(41, 256))},
		{"global_avg_pool2d", GlobalAvgPool2DOp(), ins(randf32(42, 8, 64, 8, 8))},
		{"concat", ConcatOp(1), ins(randf32(43, 64, 10), randf32(44, 64, 30))},
		{"reshape", ReshapeOp(-1, 40), ins(randf32(45, 16, 5, 8))},
		{"embedding", EmbeddingOp(0), ins(randf32(46, 50, 32), tensor.MustFromSlice([]int64{3, 0, 49, 7, 7}, 5))},
		{"sequence_pool/max", SequencePoolOp(SequencePoolMax, 0, []int{0, 3, 3, 11, 40}), ins(randf32(47, 40, 32))},
		{"sequence_conv_pool_max", SequenceConvPoolMaxOp([]int{0, 3, 3, 11, 40}, -1, 3), ins(randf32(29, 40, 32), randf32(30, 96, 64))},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range cases {
		want, err := c.op.Forward(c.in)
		require.NoError(t, err, c.name)
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/procs=%d", c.name, procs), func(t *testing.T) {
				runtime.GOMAXPROCS(procs)
				out := tensor.Empty(want.DType(), want.Shape()...)
				into := c.op.(Into)
				for range 2 { // the pools' first items
					require.NoError(t, into.ForwardInto(out, c.in))
				}
				require.Zero(t, testing.AllocsPerRun(5, func() {
					if err := into.ForwardInto(out, c.in); err != nil {
						t.Fatal(err)
					}
				}))
				requireClose(t, want, out, 1e-5, 1e-5)
			})
		}
	}
}
