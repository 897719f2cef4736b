package word2vec

import (
	"fmt"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/ptb"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/train"
)

// MinCount is the dictionary's cut-off: Paddle's imikolov.build_dict keeps
// words seen more than min_word_freq = 50 times in PTB's train and valid
// files (2,073 words, then <unk>), which ptb.Vocab counts as 51.
const MinCount = 51

// Data is the chapter's data: the dictionary and the N-gram datasets of
// PTB's three files (fields "context" [M, 4] and "next" [M], int64).
type Data struct {
	Vocab              *data.Vocab
	Train, Valid, Test *data.Dataset
}

// Load reads PTB from dir (see ptb.Load) and builds the book's
// dictionary and 5-gram datasets.
func Load(dir string) (*Data, error) {
	tr, va, te, err := ptb.Load(dir)
	if err != nil {
		return nil, err
	}
	return FromSentences(tr, va, te)
}

// FromSentences builds the dictionary from train and valid (as Paddle) and
// the 5-grams of each split.
func FromSentences(tr, va, te [][]string) (*Data, error) {
	v, err := ptb.Vocab(MinCount, tr, va)
	if err != nil {
		return nil, fmt.Errorf("word2vec: %w", err)
	}
	d := &Data{Vocab: v}
	for _, s := range []struct {
		dst   **data.Dataset
		sents [][]string
	}{{&d.Train, tr}, {&d.Valid, va}, {&d.Test, te}} {
		if *s.dst, err = ptb.NGramDataset(s.sents, v, N); err != nil {
			return nil, fmt.Errorf("word2vec: %w", err)
		}
	}
	return d, nil
}

// BatchLoss is the trainer's loss of a batch of 5-grams.
func (m *Model) BatchLoss(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
	return m.Loss(t, b.Tensor("context"), b.Tensor("next")), b.Len()
}

// Cost is the mean cross-entropy of the next word over ds (the book's
// test cost), in inference mode, batch examples at a time; report, if
// not nil, is called with the examples done after each batch.
func (m *Model) Cost(ds *data.Dataset, batch int, report func(done, total int)) (float64, error) {
	if ds == nil || ds.Len() == 0 {
		return 0, fmt.Errorf("word2vec: cost of an empty dataset")
	}
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return 0, err
	}
	return train.MeanLossOn(graph.DeviceOf(m.Params()), loader, m.BatchLoss, report)
}

// Split is a named dataset to evaluate on.
type Split struct {
	Name string
	Set  *data.Dataset
}

// Evaluator returns the trainer's evaluation: the cost on each split, as
// "<name>_cost".
func (m *Model) Evaluator(batch int, splits ...Split) train.Evaluator {
	return func(report func(done, total int)) (train.Metrics, error) {
		total := 0
		for _, s := range splits {
			total += s.Set.Len()
		}
		out, base := train.Metrics{}, 0
		for _, s := range splits {
			c, err := m.Cost(s.Set, batch, func(done, _ int) { report(base+done, total) })
			if err != nil {
				return nil, err
			}
			out[s.Name+"_cost"] = c
			base += s.Set.Len()
		}
		return out, nil
	}
}

// The book's optimizer: Adagrad at 3e-3 with L2 decay 8e-4, batch 100.
const (
	LR    = 3e-3
	L2    = 8e-4
	Batch = 100
)

// NewOptimizer returns the book's optimizer for m at learning rate lr:
// Fluid's Adagrad (accumulator from 0, epsilon 1e-6) with L2 decay L2 on
// every parameter (fluid.regularizer.L2DecayRegularizer).
func NewOptimizer(m *Model, lr float64) (optim.Optimizer, error) {
	if !m.built() {
		return nil, errNotBuilt("NewOptimizer")
	}
	return optim.NewAdagrad(m.Params(), optim.LR(lr), optim.InitialAccumulator(0), optim.Epsilon(1e-6), optim.L2(L2))
}
