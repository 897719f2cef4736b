package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "mse", Inputs: []string{"predictions", "targets"}, Grads: []int{0, 1},
		Make: MakeOp(func(a LossAttrs) Op { return MSEOp(a.Reduction) }), CUDA: DeviceFallback})
}

// squaredError is (p - t)² with ∂/∂p = 2(p - t) and ∂/∂t = -2(p - t).
var squaredError = binaryFn{
	f:  func(p, t float64) float64 { return (p - t) * (p - t) },
	da: func(p, t, _ float64) float64 { return 2 * (p - t) },
	db: func(p, t, _ float64) float64 { return -2 * (p - t) },
}

// MSEOp returns the op computing the squared errors (p - t)² of
// predictions p and targets t of one shape and float dtype, folded by r:
// the mean over every element (LossMean, a scalar:
// tf.reduce_mean(tf.square(p - t)), which is Keras' MeanSquaredError with
// its default reduction), the sum over every element, or none (the
// elementwise tf.square(p - t), not Keras' per-sample mean over the last
// axis). Both inputs have gradients: 2(p - t) for p and -2(p - t) for t.
func MSEOp(r LossReduction) Op {
	return &pointwiseLossOp{name: "mse", r: r, fn: squaredError}
}

// MSE returns the mean squared error of predictions against targets
// folded by r; see MSEOp.
func MSE(predictions, targets *tensor.Tensor, r LossReduction) (*tensor.Tensor, error) {
	return run(MSEOp(r), predictions, targets)
}
