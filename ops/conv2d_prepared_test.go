package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// A prepared convolution (Winograd's 3×3 SAME in float32, the
// channels-last rows in float64) gives Conv2DOp's result by Forward and
// ForwardInto at any batch size; other weights or another image size run
// unprepared; a convolution whose algorithm reads w as given prepares
// nothing; bad shapes are errors.
func TestConv2DPrepared(t *testing.T) {
	same := Conv2DAttrs{Padding: PadSame}
	for _, c := range []struct {
		name string
		x, w *tensor.Tensor
	}{
		{"winograd_f32", f32(randn(1, 2, 16, 8, 8)), f32(randn(2, 16, 16, 3, 3))},
		{"rows_f64", randn(3, 2, 16, 8, 8), randn(4, 16, 16, 3, 3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PrepareConv2D(same, c.x, c.w)
			require.NoError(t, err)
			require.NotNil(t, p)
			b := randn(5, 16)
			if c.x.DType() == tensor.Float32 {
				b = f32(b)
			}
			for _, n := range []int{2, 1, 5} {
				x := randn(uint64(10+n), n, 16, 8, 8)
				if c.x.DType() == tensor.Float32 {
					x = f32(x)
				}
				want, err := Conv2DOp(same).Forward(ins(x, c.w, b))
				require.NoError(t, err)
				got, err := Conv2DPreparedOp(same, p).Forward(ins(x, c.w, b))
				require.NoError(t, err)
				require.Equal(t, want.Raw(), got.Raw())
				into := tensor.Empty(want.DType(), want.Shape()...)
				require.NoError(t, Conv2DPreparedOp(same, p).(Into).ForwardInto(into, ins(x, c.w, b)))
				require.Equal(t, want.Raw(), into.Raw())
			}
			other := c.w.Clone()
			other.SetAt(0, other.At(0)+1)
			want, err := Conv2DOp(same).Forward(ins(c.x, other))
			require.NoError(t, err)
			got, err := Conv2DPreparedOp(same, p).Forward(ins(c.x, other))
			require.NoError(t, err)
			require.Equal(t, want.Raw(), got.Raw(), "other weights: unprepared")
			bigger := randn(20, 1, 16, 10, 8)
			if c.x.DType() == tensor.Float32 {
				bigger = f32(bigger)
			}
			want, err = Conv2DOp(same).Forward(ins(bigger, c.w))
			require.NoError(t, err)
			got, err = Conv2DPreparedOp(same, p).Forward(ins(bigger, c.w))
			require.NoError(t, err)
			require.Equal(t, want.Raw(), got.Raw(), "another image size: unprepared")
		})
	}
	p, err := PrepareConv2D(Conv2DAttrs{Groups: 4}, randn(1, 1, 4, 6, 6), randn(2, 4, 1, 3, 3))
	require.NoError(t, err)
	require.Nil(t, p, "depthwise reads w as given")
	_, err = PrepareConv2D(same, randn(1, 1, 3, 6, 6), randn(2, 4, 2, 3, 3))
	require.ErrorContains(t, err, "conv2d: inputs float64[1 3 6 6], float64[4 2 3 3]")
	_, err = PrepareConv2D(same, nil, nil)
	require.Error(t, err)
}
