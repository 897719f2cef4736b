package graph

import (
	"math/rand/v2"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The graph forms of ops' normalisation, dropout, softmax and loss ops.
// Whether batch norm and dropout behave as in training is the tape's
// choice (Tape.Training), never an argument, so one model serves both.

// constIn wraps x, a tensor input of op that takes no gradient, as a
// constant on v's tape; a nil x fails naming op.
func constIn(op string, v *Value, x *tensor.Tensor) *Value {
	if x == nil {
		return failed(v, &ops.Error{Op: op, Msg: "nil tensor input"})
	}
	return v.Tape().Const(x)
}

// training reports whether v's tape is in training mode.
func training(v *Value) bool { return v != nil && v.tape != nil && v.tape.Training() }

// BatchNorm returns the batch normalisation of x over axis 1 ([N, C] or
// NCHW) with gamma and beta of shape [C] and the attributes a
// (ops.BatchNormOp; Keras' defaults are ops.DefaultBatchNormMomentum and
// ops.DefaultBatchNormEpsilon). a.Training is ignored: the tape decides.
// On a training tape it normalises with the batch statistics and updates
// movingMean and movingVar in place (moving = moving·momentum +
// batch·(1 - momentum)); on an inference tape it normalises with them.
// On a tape of a data-parallel run (Tape.SetCrossReplica) the training
// statistics are those of every replica's batch together, and
// a.CrossReplica is ignored too.
func BatchNorm(x, gamma, beta *Value, movingMean, movingVar *tensor.Tensor, a ops.BatchNormAttrs) *Value {
	a.Training, a.CrossReplica = training(x), nil
	if a.Training {
		a.CrossReplica = x.tape.CrossReplica()
	}
	return apply(ops.BatchNormOp(a), x, gamma, beta, constIn("batch_norm", x, movingMean), constIn("batch_norm", x, movingVar))
}

// LayerNorm returns the layer normalisation of x over its last axes axes
// with gamma and beta of those axes' shape (ops.LayerNormOp; Keras'
// default epsilon is ops.DefaultLayerNormEpsilon).
func LayerNorm(x, gamma, beta *Value, axes int, epsilon float64) *Value {
	return apply(ops.LayerNormOp(axes, epsilon), x, gamma, beta)
}

// GroupNorm returns the group normalisation of x [N, C, spatial...]: each
// sample's numGroups groups of consecutive channels normalised over their
// channels and positions, then scale[c]·x̂ + bias[c] with scale and bias
// [C] (PyTorch GroupNorm; ONNX GroupNormalization, opset 21). See
// ops.GroupNormOp; ops.DefaultNormEpsilon is PyTorch's and ONNX's epsilon.
func GroupNorm(x, scale, bias *Value, numGroups int, epsilon float64) *Value {
	return apply(ops.GroupNormOp(ops.GroupNormAttrs{NumGroups: numGroups, Epsilon: epsilon}), x, scale, bias)
}

// InstanceNorm returns the instance normalisation of x [N, C, D1, ...]:
// each sample's channel normalised over its positions, then scale[c]·x̂ +
// bias[c] (ONNX InstanceNormalization). See ops.InstanceNormOp.
func InstanceNorm(x, scale, bias *Value, epsilon float64) *Value {
	return apply(ops.InstanceNormOp(ops.InstanceNormAttrs{Epsilon: epsilon}), x, scale, bias)
}

// Dropout returns x with inverted dropout at rate, drawing the mask from
// rng (ops.DropoutOp), on a training tape; on an inference tape it returns
// x itself. A rate outside [0, 1) fails on either tape, so the mistake
// shows in evaluation too.
func Dropout(x *Value, rate float64, rng *rand.Rand) *Value {
	if x != nil && x.Err() == nil && !training(x) {
		if !(rate >= 0 && rate < 1) { // the op's own check, which inference skips
			return failed(x, ops.Errorf("dropout", []*tensor.Tensor{x.t}, "rate %v outside [0, 1)", rate))
		}
		return x
	}
	return apply(ops.DropoutOp(rate, rng), x)
}

// Softmax returns softmax(x) along axis (-1 for the last; ops.SoftmaxOp).
func Softmax(x *Value, axis int) *Value { return apply(ops.SoftmaxOp(axis), x) }

// LogSoftmax returns log(softmax(x)) along axis, computed stably
// (ops.LogSoftmaxOp).
func LogSoftmax(x *Value, axis int) *Value { return apply(ops.LogSoftmaxOp(axis), x) }

// SoftmaxCrossEntropy returns the batch mean of the softmax cross-entropy
// of logits [N, C] with int32 or int64 class labels [N]
// (tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(...)); a
// label outside [0, C) fails). For the sum or the per-example losses,
// Apply ops.SoftmaxCrossEntropyOp(ops.LossSum or ops.LossNone).
func SoftmaxCrossEntropy(logits *Value, labels *tensor.Tensor) *Value {
	return apply(ops.SoftmaxCrossEntropyOp(ops.LossMean), logits, constIn("softmax_cross_entropy", logits, labels))
}

// SoftmaxCrossEntropySoft returns the batch mean of the softmax
// cross-entropy of logits [N, C] with probability labels [N, C]
// (tf.nn.softmax_cross_entropy_with_logits); both get gradients
// (ops.SoftmaxCrossEntropySoftOp).
func SoftmaxCrossEntropySoft(logits, labels *Value) *Value {
	return apply(ops.SoftmaxCrossEntropySoftOp(ops.LossMean), logits, labels)
}

// SigmoidCrossEntropy returns the mean over every element of
// tf.nn.sigmoid_cross_entropy_with_logits(labels, logits), both of one
// shape (ops.SigmoidCrossEntropyOp).
func SigmoidCrossEntropy(logits, labels *Value) *Value {
	return apply(ops.SigmoidCrossEntropyOp(ops.LossMean), logits, labels)
}

// MSE returns the mean over every element of (predictions - targets)²,
// both of one shape (ops.MSEOp).
func MSE(predictions, targets *Value) *Value {
	return apply(ops.MSEOp(ops.LossMean), predictions, targets)
}
