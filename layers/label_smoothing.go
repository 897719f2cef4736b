package layers

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// LabelSmoothedCrossEntropy returns the batch mean of the cross-entropy of
// logits [N, C] against labels [N] (int32 or int64) smoothed by eps
// (Szegedy et al. 2016, section 7; PyTorch's
// CrossEntropyLoss(label_smoothing=eps)): the target puts 1 - eps on the
// label and eps/C on every class, so
//
//	loss_i = (1 - eps)·(-log p_i[label_i]) + eps·mean_c(-log p_i[c])
//
// eps must be in [0, 1); eps 0 is graph.SoftmaxCrossEntropy.
func LabelSmoothedCrossEntropy(logits *graph.Value, labels *tensor.Tensor, eps float64) *graph.Value {
	t := logits.Tape()
	if t == nil {
		return noTape("label-smoothed cross-entropy", logits)
	}
	if !(eps >= 0 && eps < 1) {
		return t.Fail(fmt.Errorf("layers: label-smoothed cross-entropy: eps %v outside [0, 1)", eps))
	}
	nll := graph.SoftmaxCrossEntropy(logits, labels)
	if eps == 0 {
		return nll
	}
	dt := logits.DType()
	keep, _ := tensor.Full(dt, 1-eps)
	smooth, _ := tensor.Full(dt, -eps)
	uniform := graph.Mean(graph.LogSoftmax(logits, -1)) // mean over rows and classes
	return graph.Add(graph.Mul(nll, constOn(logits, keep)), graph.Mul(uniform, constOn(logits, smooth)))
}
