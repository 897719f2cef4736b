//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

func TestConv2DTranspose(t *testing.T) {
	rng := tensor.NewRNG(46)
	type attrs = ops.Conv2DTransposeAttrs
	type conv = ops.Conv2DAttrs
	for _, c := range []struct {
		x, w  []int
		attrs attrs
		bias  bool
	}{
		{[]int{2, 4, 5, 5}, []int{4, 3, 3, 3}, attrs{Conv2DAttrs: conv{Stride: [2]int{2, 2}}, OutputPadding: [2]int{1, 1}}, true},
		{[]int{3, 4, 4, 6}, []int{4, 2, 3, 2}, attrs{Conv2DAttrs: conv{Stride: [2]int{2, 1}, Groups: 2, Pad: [4]int{1, 0, 2, 1}, Padding: ops.PadExplicit}}, true},
		{[]int{1, 3, 7, 5}, []int{3, 2, 4, 4}, attrs{Conv2DAttrs: conv{Stride: [2]int{2, 2}, Padding: ops.PadSame}}, false},
		{[]int{2, 2, 3, 4}, []int{2, 5, 3, 3}, attrs{Conv2DAttrs: conv{Dilation: [2]int{2, 3}, Padding: ops.PadValid}}, true},
		{[]int{1, 3, 3, 3}, []int{3, 1, 1, 1}, attrs{Conv2DAttrs: conv{Stride: [2]int{3, 3}, Groups: 3}, OutputPadding: [2]int{2, 1}}, true},
		{[]int{4, 16, 17, 17}, []int{16, 8, 3, 3}, attrs{Conv2DAttrs: conv{Stride: [2]int{1, 1}, Padding: ops.PadSame}}, false},
		{[]int{0, 2, 3, 3}, []int{2, 2, 2, 2}, attrs{}, true},
	} {
		t.Run(fmt.Sprint(c.x, c.w, c.attrs), func(t *testing.T) {
			x, w := randn(t, rng, c.x...), randn(t, rng, c.w...)
			in := []*tensor.Tensor{x, w}
			var bb *Buffer
			if c.bias {
				b := randn(t, rng, c.w[1]*max(c.attrs.Groups, 1))
				in = append(in, b)
				bb = up(t, b)
			}
			out, err := ops.Conv2DTransposeOp(c.attrs).Forward(in)
			require.NoError(t, err)
			gout := randn(t, rng, out.Shape()...)
			need := [3]bool{true, true, c.bias}
			_, grads := cpuOp(t, ops.Conv2DTransposeOp(c.attrs), in, gout, need[:])
			g := dev.conv2dTransposeOp(c.attrs)
			y, err := g.Forward(up(t, x), up(t, w), bb)
			require.NoError(t, err)
			defer y.Free()
			requireClose(t, out, y, tolGEMM, "forward")
			dx, dw, db, err := g.Backward(up(t, gout), need)
			require.NoError(t, err)
			defer freeAll(dx, dw, db)
			requireClose(t, grads[0], dx, tolGEMM, "dx")
			requireClose(t, grads[1], dw, tolGEMM, "dw")
			if c.bias {
				requireClose(t, grads[2], db, tolGEMM, "db")
			}
			_, dw2, _, err := g.Backward(up(t, gout), [3]bool{false, true, false}) // the filter gradient alone
			require.NoError(t, err)
			defer dw2.Free()
			requireClose(t, grads[1], dw2, tolGEMM, "dw alone")
		})
	}
	// ops.Dispatch's check (conv2dTransposeOp.Check) rejects bad inputs on the device.
	x, w := onDevice(t, randn(t, rng, 1, 2, 3, 3)), onDevice(t, randn(t, rng, 2, 1, 3, 3))
	_, err := ops.Run(ops.Conv2DTransposeOp(attrs{OutputPadding: [2]int{1, 0}}), x, w)
	require.ErrorContains(t, err, "output padding [1 0] must be non-negative and below the stride [1 1]")
	_, err = ops.Run(ops.Conv2DTransposeOp(attrs{}), x, onDevice(t, randn(t, rng, 3, 1, 3, 3)))
	require.ErrorContains(t, err, "want w [C=2, O/groups, KH, KW]")
	_, err = ops.Run(ops.Conv2DTransposeOp(attrs{Conv2DAttrs: conv{Pad: [4]int{3, 3, 0, 0}, Padding: ops.PadExplicit}}), x, w)
	require.ErrorContains(t, err, "leaves an empty output")
}

// BenchmarkConv2DTranspose is one forward and backward pass of a DCGAN-style
// 4×4 stride-2 SAME transposed convolution, 64 → 32 channels from 16×16
// to 32×32, at batch 64.
func BenchmarkConv2DTranspose(b *testing.B) {
	x, w := upB(b, 64, 64, 16, 16), upB(b, 64, 32, 4, 4)
	flops := 3 * 2 * float64(64*64*16*16*32*16) // forward, data and filter gradients
	a := ops.Conv2DTransposeAttrs{Conv2DAttrs: ops.Conv2DAttrs{Stride: [2]int{2, 2}, Padding: ops.PadSame}}
	b.ResetTimer()
	for b.Loop() {
		o := dev.conv2dTransposeOp(a)
		y, err := o.Forward(x, w, nil)
		if err != nil {
			b.Fatal(err)
		}
		dx, dw, _, err := o.Backward(y, [3]bool{true, true, false})
		if err != nil {
			b.Fatal(err)
		}
		freeAll(y, dx, dw)
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
