package ops

import (
	"math"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sigmoid_cross_entropy", Inputs: []string{"logits", "labels"}, Grads: []int{0, 1},
		Make: MakeOp(func(a LossAttrs) Op { return SigmoidCrossEntropyOp(a.Reduction) }), CUDA: DeviceFallback})
}

// sigmoidXent is tf.nn.sigmoid_cross_entropy_with_logits for logits x and
// labels z in its stable form max(x, 0) - x·z + log(1 + exp(-|x|)), with
// ∂/∂x = sigmoid(x) - z and ∂/∂z = -x.
var sigmoidXent = binaryFn{
	f: func(x, z float64) float64 {
		return math.Max(x, 0) - x*z + math.Log1p(math.Exp(-math.Abs(x)))
	},
	da: func(x, z, _ float64) float64 { return sigmoid(x) - z },
	db: func(x, z, _ float64) float64 { return -x },
}

// SigmoidCrossEntropyOp returns the op computing, elementwise for logits x
// and labels z of one shape and float dtype,
//
//	loss = max(x, 0) - x·z + log(1 + exp(-|x|))
//
// (tf.nn.sigmoid_cross_entropy_with_logits' stable form of
// -z·log(sigmoid(x)) - (1-z)·log(1-sigmoid(x))), folded by r: the mean
// over every element (LossMean, a scalar: tf.reduce_mean of TF's result),
// the sum, or none (the inputs' shape, TF's result). Both inputs have
// gradients: sigmoid(x) - z for the logits and -x for the labels.
func SigmoidCrossEntropyOp(r LossReduction) Op {
	return &pointwiseLossOp{name: "sigmoid_cross_entropy", r: r, fn: sigmoidXent}
}

// SigmoidCrossEntropy returns the sigmoid cross-entropy of logits with
// labels; see SigmoidCrossEntropyOp.
func SigmoidCrossEntropy(logits, labels *tensor.Tensor, r LossReduction) (*tensor.Tensor, error) {
	return run(SigmoidCrossEntropyOp(r), logits, labels)
}
