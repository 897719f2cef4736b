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
// (ops.LinearSoftmaxCrossEntropyOp). When the tape records and an input
// needs a gradient, the gradients are taken in the forward pass, which
// saves recomputing the logits in Backward
// (ops.LinearSoftmaxCrossEntropyEagerOp).
func LinearSoftmaxCrossEntropy(x, w, b *Value, labels *tensor.Tensor) *Value {
	var want [3]bool
	for i, v := range []*Value{x, w, b} {
		want[i] = v != nil && v.err == nil && v.tape != nil && v.tape.grad && v.requiresGrad
	}
	op := ops.LinearSoftmaxCrossEntropyOp(0)
	if want != [3]bool{} {
		op = ops.LinearSoftmaxCrossEntropyEagerOp(0, want)
	}
	return apply(op, x, w, b, constIn("linear_softmax_cross_entropy", x, labels))
}
