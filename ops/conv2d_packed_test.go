package ops

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The packed op computes what Conv2DOp computes, bit for bit, in both
// dtypes, with and without a bias, on the kernel families conv2d chooses
// from (Winograd, implicit GEMM, row matrix, depthwise, grouped im2col)
// and odd geometries: strides, dilations, explicit and SAME padding, 1×1,
// 3×3, 5×5 and 7×7 kernels, and a second batch and image size through
// the same packing.
func TestConv2DPackedMatchesConv2D(t *testing.T) {
	for i, tc := range []struct {
		name  string
		x, w  []int
		attrs Conv2DAttrs
	}{
		{"winograd_3x3", []int{2, 16, 9, 11}, []int{24, 16, 3, 3}, Conv2DAttrs{Pad: [4]int{1, 1, 1, 1}}},
		{"grid_3x3_same", []int{2, 17, 14, 13}, []int{19, 17, 3, 3}, Conv2DAttrs{Padding: PadSame}},
		{"stem_7x7_stride2", []int{1, 3, 21, 23}, []int{16, 3, 7, 7}, Conv2DAttrs{Stride: [2]int{2, 2}, Pad: [4]int{3, 3, 3, 3}}},
		{"5x5_dilated", []int{2, 8, 15, 13}, []int{12, 8, 5, 5}, Conv2DAttrs{Dilation: [2]int{2, 1}, Padding: PadSame}},
		{"1x1_stride2", []int{3, 32, 9, 9}, []int{40, 32, 1, 1}, Conv2DAttrs{Stride: [2]int{2, 2}}},
		{"depthwise_3x3_stride2", []int{2, 16, 11, 10}, []int{16, 1, 3, 3}, Conv2DAttrs{Groups: 16, Stride: [2]int{2, 2}, Pad: [4]int{1, 1, 1, 1}}},
		{"grouped_3x3", []int{2, 12, 8, 9}, []int{18, 4, 3, 3}, Conv2DAttrs{Groups: 3, Pad: [4]int{0, 2, 1, 0}}},
		{"one_channel_5x5", []int{2, 1, 12, 12}, []int{6, 1, 5, 5}, Conv2DAttrs{}},
	} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			t.Run(fmt.Sprintf("%s_%v", tc.name, dt), func(t *testing.T) {
				cast := func(x *tensor.Tensor) *tensor.Tensor {
					if dt == tensor.Float32 {
						return f32(x)
					}
					return x
				}
				w, b := cast(randn(uint64(10*i+1), tc.w...)), cast(randn(uint64(10*i+2), tc.w[0]))
				p, err := PackConvWeights(w, tc.attrs)
				require.NoError(t, err)
				big := append([]int{tc.x[0] + 1, tc.x[1]}, tc.x[2]+3, tc.x[3]+1)
				for j, shape := range [][]int{tc.x, big} {
					x := cast(randn(uint64(10*i+3+j), shape...))
					for _, in := range [][]*tensor.Tensor{ins(x, w), ins(x, w, b)} {
						want, err := Conv2DOp(tc.attrs).Forward(in)
						require.NoError(t, err)
						got, err := Conv2DPackedOp(tc.attrs, p).Forward(in)
						require.NoError(t, err)
						require.Equal(t, want.DType(), got.DType())
						requireClose(t, want, got, 0, 0) // the same bits: no NaN arises
					}
				}
			})
		}
	}
}

// Other weights than the packed ones, other strides, and bad inputs go
// through Conv2DOp: its results and its errors; packing rejects what it
// cannot prepare.
func TestConv2DPackedFallsBack(t *testing.T) {
	a := Conv2DAttrs{Pad: [4]int{1, 1, 1, 1}}
	w, other := f32(randn(1, 16, 16, 3, 3)), f32(randn(2, 16, 16, 3, 3))
	p, err := PackConvWeights(w, a)
	require.NoError(t, err)
	x := f32(randn(3, 1, 16, 6, 7))
	for _, tc := range []struct {
		w     *tensor.Tensor
		attrs Conv2DAttrs
	}{{other, a}, {w, Conv2DAttrs{Stride: [2]int{2, 2}}}} {
		want, err := Conv2D(x, tc.w, nil, tc.attrs)
		require.NoError(t, err)
		got, err := Conv2DPackedOp(tc.attrs, p).Forward(ins(x, tc.w))
		require.NoError(t, err)
		requireClose(t, want, got, 0, 0)
	}
	_, err = Conv2DPackedOp(a, p).Forward(ins(f32(randn(1, 1, 8, 6, 7)), w))
	require.ErrorContains(t, err, "conv2d")
	_, err = Conv2DPackedOp(a, p).Forward(ins(x, w, f32(randn(4, 5))))
	require.ErrorContains(t, err, "want bias [16]")

	for _, bad := range []struct {
		w     *tensor.Tensor
		attrs Conv2DAttrs
	}{
		{nil, a}, {randn(1, 4, 4), a}, {tensor.Zeros(tensor.Int64, 2, 2, 3, 3), a},
		{randn(1, 5, 2, 3, 3), Conv2DAttrs{Groups: 2}}, {randn(1, 4, 2, 3, 3), Conv2DAttrs{Groups: -1}},
	} {
		_, err := PackConvWeights(bad.w, bad.attrs)
		require.ErrorContains(t, err, "conv2d")
	}
}

// Concurrent forward passes share one packing (made at the first
// product, under a sync.Once) and each gets Conv2DOp's bits; run with
// -race.
func TestConv2DPackedConcurrent(t *testing.T) {
	a := Conv2DAttrs{Pad: [4]int{1, 1, 1, 1}}
	w := f32(randn(1, 16, 16, 3, 3))
	p, err := PackConvWeights(w, a)
	require.NoError(t, err)
	errs := make(chan error, 4)
	for k := range 4 {
		go func() {
			x := f32(randn(uint64(20+k), 2, 16, 8, 8))
			want, err := Conv2D(x, w, nil, a)
			if err != nil {
				errs <- err
				return
			}
			got, err := Conv2DPackedOp(a, p).Forward(ins(x, w))
			if err != nil {
				errs <- err
				return
			}
			for e := range want.Size() {
				if want.At(e) != got.At(e) {
					errs <- fmt.Errorf("goroutine %d: element %d is %v, want %v", k, e, got.At(e), want.At(e))
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
}
