//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

func TestLayerNorm(t *testing.T) {
	rng := tensor.NewRNG(40)
	for _, c := range []struct {
		shape []int
		axes  int
		need  [3]bool
	}{
		{[]int{4, 10}, 1, [3]bool{true, true, true}},
		{[]int{3, 5, 17}, 2, [3]bool{true, true, true}},
		{[]int{1, 1}, 1, [3]bool{true, true, true}},
		{[]int{127, 3}, 1, [3]bool{true, false, true}},
		{[]int{2, 3, 513}, 1, [3]bool{false, true, false}},
		{[]int{300, 33}, 1, [3]bool{true, true, true}}, // five row chunks of the parameter gradients
		{[]int{0, 7}, 1, [3]bool{true, true, true}},
		{[]int{5}, 1, [3]bool{true, true, true}},
	} {
		t.Run(fmt.Sprint(c.shape, c.axes, c.need), func(t *testing.T) {
			norm := c.shape[len(c.shape)-c.axes:]
			x := randn(t, rng, c.shape...)
			for i, v := range x.Float32s() { // off-centre rows, so the mean matters
				x.Float32s()[i] = 3*v + 5
			}
			gamma, beta, gout := randn(t, rng, norm...), randn(t, rng, norm...), randn(t, rng, c.shape...)
			in := []*tensor.Tensor{x, gamma, beta}
			want, grads := cpuOp(t, ops.LayerNormOp(c.axes, 1e-3), in, gout, c.need[:])
			o := dev.layerNormOp(c.axes, 1e-3)
			defer o.Free()
			y, err := o.Forward(up(t, x), up(t, gamma), up(t, beta))
			require.NoError(t, err)
			defer y.Free()
			requireClose(t, want, y, tolReduce, "forward")
			dx, dg, db, err := o.Backward(up(t, gout), c.need)
			require.NoError(t, err)
			defer freeAll(dx, dg, db)
			for i, g := range []*Buffer{dx, dg, db} {
				if !c.need[i] {
					require.Nil(t, g, "gradient %d not asked for", i)
					continue
				}
				requireClose(t, grads[i], g, tolReduce, fmt.Sprint("gradient ", i))
			}
		})
	}
	// ops.Dispatch's check (layerNormOp.Check) rejects bad inputs on the device.
	xt := onDevice(t, randn(t, rng, 2, 3))
	_, err := ops.Run(ops.LayerNormOp(1, 1e-3), xt, onDevice(t, randn(t, rng, 2)), onDevice(t, randn(t, rng, 3)))
	require.ErrorContains(t, err, "want gamma and beta of shape [3]")
	_, err = ops.Run(ops.LayerNormOp(3, 1e-3), xt, onDevice(t, randn(t, rng, 3)), onDevice(t, randn(t, rng, 3)))
	require.ErrorContains(t, err, "last 3 axes of a rank-2 x")
}

// BenchmarkLayerNorm is one forward and backward pass (all three
// gradients) of layer norm over the last axis of [4096, 1024]. GB/s counts
// the least traffic such a pass needs, five tensors of x's size: x and y
// forward, x, gout and dx backward.
func BenchmarkLayerNorm(b *testing.B) {
	x, gamma, beta := upB(b, 4096, 1024), upB(b, 1024), upB(b, 1024)
	b.ResetTimer()
	for b.Loop() {
		o := dev.layerNormOp(1, 1e-3)
		y, err := o.Forward(x, gamma, beta)
		if err != nil {
			b.Fatal(err)
		}
		dx, dg, db, err := o.Backward(y, [3]bool{true, true, true})
		if err != nil {
			b.Fatal(err)
		}
		freeAll(y, dx, dg, db)
		o.Free()
	}
	b.ReportMetric(5*4096*1024*4*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
