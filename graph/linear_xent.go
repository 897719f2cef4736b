package graph

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// LinearSoftmaxCrossEntropy returns the mean softmax cross-entropy of the
// logits x·w + b (x [N, D], w [D, V], b [V]) against labels [N], over the
// rows whose label is not negative (a negative label is padding), without
// holding the [N, V] logits: the output projection of a language model or
// decoder fused with its loss, a chunk of rows at a time
// (ops.LinearSoftmaxCrossEntropyOp).
func LinearSoftmaxCrossEntropy(x, w, b *Value, labels *tensor.Tensor) *Value {
	return apply(ops.LinearSoftmaxCrossEntropyOp(0), x, w, b, constIn("linear_softmax_cross_entropy", x, labels))
}
