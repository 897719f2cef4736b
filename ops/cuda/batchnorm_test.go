//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// tolBatchNormDx bounds batch norm's training dx, dy - (Σdy + x̂·Σdy·x̂)/m:
// both sides sum in double, but the terms cancel, so the float32 result
// is compared at the scale of the channel's gradient, not of its value.
var tolBatchNormDx = tol{rtol: 1e-4, atol: 1e-5}

func TestBatchNorm(t *testing.T) {
	rng := tensor.NewRNG(21)
	for _, c := range []struct {
		shape    []int
		training bool
		momentum float64
	}{
		{[]int{3, 17}, true, ops.DefaultBatchNormMomentum},
		{[]int{127, 3}, true, 0.9},
		{[]int{1, 513}, true, ops.DefaultBatchNormMomentum}, // one sample per channel: variance 0
		{[]int{3, 5, 17, 3}, true, ops.DefaultBatchNormMomentum},
		{[]int{17, 3, 1, 127}, true, 0},
		{[]int{2, 513, 3}, true, 1},
		{[]int{64, 20, 12, 12}, true, ops.DefaultBatchNormMomentum}, // the MNIST CNN's bn1
		{[]int{3, 5, 17, 3}, false, ops.DefaultBatchNormMomentum},
		{[]int{127, 3}, false, ops.DefaultBatchNormMomentum},
		{[]int{0, 3, 4, 4}, false, ops.DefaultBatchNormMomentum}, // empty batch in inference
		{[]int{5, 0}, true, ops.DefaultBatchNormMomentum},        // no channels
	} {
		t.Run(fmt.Sprint(c.shape, c.training, c.momentum), func(t *testing.T) {
			ch := c.shape[1]
			x := randn(t, rng, c.shape...)
			for i, v := range x.Float32s() { // a non-zero mean
				x.Float32s()[i] = v + 0.5
			}
			gamma, beta := uniform(t, rng, 0.5, 2, ch), randn(t, rng, ch)
			rm, rv := randn(t, rng, ch), uniform(t, rng, 0.5, 2, ch)
			attrs := ops.BatchNormAttrs{Momentum: c.momentum, Epsilon: ops.DefaultBatchNormEpsilon, Training: c.training}
			gx, gg, gb, grm, grv := up(t, x), up(t, gamma), up(t, beta), up(t, rm), up(t, rv)

			in := []*tensor.Tensor{x, gamma, beta, rm.Clone(), rv.Clone()}
			op := ops.BatchNormOp(attrs)
			out, err := op.Forward(in)
			require.NoError(t, err)
			gout := randn(t, rng, c.shape...)
			grads, err := op.Backward(in, out, gout, []bool{true, true, true})
			require.NoError(t, err)

			g := dev.batchNormOp(attrs)
			defer g.Free()
			y, err := g.Forward(gx, gg, gb, grm, grv)
			require.NoError(t, err)
			defer y.Free()
			requireClose(t, out, y, tolReduce, "forward")
			requireClose(t, in[3], grm, tolReduce, "moving mean")
			requireClose(t, in[4], grv, tolReduce, "moving variance")
			dx, dgamma, dbeta, err := g.Backward(up(t, gout), [3]bool{true, true, true})
			require.NoError(t, err)
			defer freeAll(dx, dgamma, dbeta)
			requireClose(t, grads[0], dx, tolBatchNormDx, "dx")
			requireClose(t, grads[1], dgamma, tolReduce, "dgamma")
			requireClose(t, grads[2], dbeta, tolReduce, "dbeta")

			// Only the wanted gradients come back.
			dx, dgamma, dbeta, err = g.Backward(up(t, gout), [3]bool{false, true, false})
			require.NoError(t, err)
			defer freeAll(dgamma)
			require.Nil(t, dx)
			require.Nil(t, dbeta)
			requireClose(t, grads[1], dgamma, tolReduce, "dgamma alone")
		})
	}
}

// TestBatchNormErrors checks that bad inputs on the device fail with
// ops' errors, which ops.Dispatch's check (batchNormOp.Check) gives before
// the kernel runs.
func TestBatchNormErrors(t *testing.T) {
	rng := tensor.NewRNG(22)
	td := func(x *tensor.Tensor) *tensor.Tensor { return onDevice(t, x) }
	xt, p3t, p4t := td(randn(t, rng, 2, 3, 4)), td(randn(t, rng, 3)), td(randn(t, rng, 4))
	keras := ops.BatchNormAttrs{Momentum: ops.DefaultBatchNormMomentum, Epsilon: ops.DefaultBatchNormEpsilon, Training: true}
	for _, c := range []struct {
		name  string
		attrs ops.BatchNormAttrs
		in    []*tensor.Tensor
		want  string
	}{
		{"gamma of the wrong size", keras, []*tensor.Tensor{xt, p4t, p3t, p3t, p3t}, "of shape [3]"},
		{"rank 1", keras, []*tensor.Tensor{p3t, p3t, p3t, p3t, p3t}, "rank >= 2"},
		{"momentum", ops.BatchNormAttrs{Momentum: 1.5, Epsilon: 1e-3}, []*tensor.Tensor{xt, p3t, p3t, p3t, p3t}, "momentum"},
		{"epsilon", ops.BatchNormAttrs{Momentum: 0.99}, []*tensor.Tensor{xt, p3t, p3t, p3t, p3t}, "epsilon"},
		{"empty training batch", keras, []*tensor.Tensor{td(tensor.Zeros(tensor.Float32, 0, 3)), p3t, p3t, p3t, p3t}, "non-empty batch"},
		{"nil input", keras, []*tensor.Tensor{xt, nil, p3t, p3t, p3t}, "nil input"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ops.Run(ops.BatchNormOp(c.attrs), c.in...)
			var oe *ops.Error
			require.ErrorAs(t, err, &oe)
			require.Equal(t, "batch_norm", oe.Op)
			require.ErrorContains(t, err, c.want)
		})
	}
	x, p3 := up(t, randn(t, rng, 2, 3, 4)), up(t, randn(t, rng, 3))
	o := dev.batchNormOp(keras)
	y, err := o.Forward(x, p3, p3, p3, up(t, uniform(t, rng, 0.5, 1, 3)))
	require.NoError(t, err)
	defer y.Free()
	defer o.Free()
}
