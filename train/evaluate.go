package train

import (
	"errors"
	"fmt"
	"slices"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// BatchEval measures one batch b on the inference tape t: each metric a
// mean over the batch's examples, and how many examples it holds.
type BatchEval[B any] func(t *graph.Tape, b B) (m Metrics, examples int, err error)

// Evaluate runs eval over every batch of one pass of src (Batches(0)) on
// an inference tape (batch norm on its moving statistics, no dropout),
// released after each batch, and returns each metric's mean over the
// examples: the batches' means weighted by their sizes. report, if not
// nil, gets the examples done after every batch. An empty source, a nil
// eval and a batch without a metric the first batch had are errors.
func Evaluate[B any](src Source[B], eval BatchEval[B], report func(done, total int)) (Metrics, error) {
	switch {
	case src == nil || eval == nil:
		return nil, fmt.Errorf("train: Evaluate needs a source and a batch evaluation (got source %v, eval %v)", src, eval != nil)
	case src.Len() == 0:
		return nil, errors.New("train: Evaluate on an empty source")
	}
	tape := graph.NewEvalTape()
	var sums Metrics
	done := 0
	for b, err := range src.Batches(0) {
		if err != nil {
			return nil, err
		}
		m, n, err := eval(tape, b)
		tape.Release()
		if err != nil {
			return nil, err
		}
		if sums == nil {
			sums = Metrics{}
			for k := range m {
				sums[k] = 0
			}
		}
		for k := range sums {
			v, ok := m[k]
			if !ok {
				return nil, fmt.Errorf("train: Evaluate: a batch without metric %q (it has %v)", k, keys(m))
			}
			sums[k] += v * float64(n)
		}
		done += n
		if report != nil {
			report(done, src.Len())
		}
	}
	if done == 0 {
		return nil, errors.New("train: Evaluate: the source yielded no examples")
	}
	for k := range sums {
		sums[k] /= float64(done)
	}
	return sums, nil
}

// Evaluation is Evaluate over src as the trainer's Evaluator.
func Evaluation[B any](src Source[B], eval BatchEval[B]) Evaluator {
	return func(report func(done, total int)) (Metrics, error) { return Evaluate(src, eval, report) }
}

// MeanLoss is the mean over src's examples of loss, each batch's mean
// weighted by its size, on an inference tape (see Evaluate): a model's
// test cost from the loss it trains on.
func MeanLoss[B any](src Source[B], loss LossFunc[B], report func(done, total int)) (float64, error) {
	if loss == nil {
		return 0, errors.New("train: MeanLoss: nil loss")
	}
	m, err := Evaluate(src, func(t *graph.Tape, b B) (Metrics, int, error) {
		l, n := loss(t, b)
		v, err := l.Item()
		return Metrics{"loss": v}, n, err
	}, report)
	return m["loss"], err
}

// Classification returns the metrics of a classifier's logits [N, C] on
// int32 or int64 labels [N]: "loss", the mean softmax cross-entropy
// (graph.SoftmaxCrossEntropy), and "accuracy" (ops.Accuracy).
func Classification(logits *graph.Value, labels *tensor.Tensor) (Metrics, error) {
	loss, err := graph.SoftmaxCrossEntropy(logits, labels).Item()
	if err != nil {
		return nil, err
	}
	lt, err := logits.Host() // the accuracy is counted on the host
	if err != nil {
		return nil, err
	}
	lh, err := labels.To(nil)
	if err != nil {
		return nil, err
	}
	acc, err := ops.Accuracy(lt, lh)
	if err != nil {
		return nil, err
	}
	return Metrics{"accuracy": acc, "loss": loss}, nil
}

// keys lists m's names in order, for messages.
func keys(m Metrics) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
