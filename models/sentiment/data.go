// Package sentiment is the PaddlePaddle book's chapter 6 ("Understand
// Sentiment"): IMDB review classification with a text CNN (sequence
// convolutions of windows 3 and 4, tanh, max pooling over time) and with
// the stacked LSTM net (fc and LSTM layers of alternating direction, max
// pooling of the last fc and LSTM outputs). Reviews are ragged batches:
// no padding, every review computes only its own steps.
package sentiment

import (
	"errors"
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/imdb"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// MinCount is the dictionary's cut-off: Paddle's imdb.word_dict keeps the
// words seen more than 150 times in the train and test reviews (5,147 with
// <unk>), which imdb.Vocab counts as 151.
const MinCount = 151

// The book's training recipe: Adagrad at 2e-3, batch 128, embeddings of
// 128, two classes.
const (
	LR      = 2e-3
	Batch   = 128
	Embed   = 128
	Classes = 2
)

// Data is the chapter's data: the dictionary and the encoded reviews
// (fields "words", ragged int64 ids, and "label", int64).
type Data struct {
	Vocab       *data.Vocab
	Train, Test *data.Dataset
}

// Load reads aclImdb from src (see imdb.Load) and encodes it with
// the book's dictionary.
func Load(src string) (*Data, error) {
	return LoadProgress(src, nil)
}

// LoadProgress is Load showing on log (nil: silently) the reviews it has
// read while the archive takes more than a second (data.NewProgress).
func LoadProgress(src string, log io.Writer) (*Data, error) {
	tr, te, err := imdb.LoadProgress(src, data.Limits{}, data.NewProgress(log, src, "reviews", 0))
	if err != nil {
		return nil, err
	}
	return FromReviews(tr, te)
}

// FromReviews builds the dictionary from both splits (as Paddle does) and
// encodes them.
func FromReviews(tr, te []imdb.Review) (*Data, error) {
	v, err := imdb.Vocab(MinCount, tr, te)
	if err != nil {
		return nil, fmt.Errorf("sentiment: %w", err)
	}
	d := &Data{Vocab: v}
	if d.Train, err = imdb.Dataset(tr, v); err != nil {
		return nil, fmt.Errorf("sentiment: %w", err)
	}
	if d.Test, err = imdb.Dataset(te, v); err != nil {
		return nil, fmt.Errorf("sentiment: %w", err)
	}
	return d, nil
}

// Model maps a ragged batch of word ids to class logits [B, 2].
type Model interface {
	layers.Module
	Logits(t *graph.Tape, words *tensor.Ragged) *graph.Value
}

// New returns the model called name ("cnn" or "lstm") for a dictionary
// of vocab words.
func New(name string, vocab int, rng randSource, opts ...layers.Option) (Model, error) {
	switch name {
	case "cnn":
		return NewCNN(vocab, rng, opts...)
	case "lstm":
		return NewStackedLSTM(vocab, rng, opts...)
	}
	return nil, fmt.Errorf("sentiment: unknown model %q (want cnn or lstm)", name)
}

// NewOptimizer returns the book's optimizer: Fluid's Adagrad (accumulator
// from 0, epsilon 1e-6) at lr.
func NewOptimizer(m Model, lr float64) (optim.Optimizer, error) {
	if m == nil {
		return nil, errors.New("sentiment: NewOptimizer: nil model (build it with New, NewCNN or NewStackedLSTM)")
	}
	ps := m.Params()
	if len(ps) == 0 {
		return nil, errors.New("sentiment: NewOptimizer: a model without parameters (build it with New, NewCNN or NewStackedLSTM)")
	}
	return optim.NewAdagrad(ps, optim.LR(lr), optim.InitialAccumulator(0), optim.Epsilon(1e-6))
}

func errNotBuilt(method, constructor string) error {
	return fmt.Errorf("sentiment: %s: a nil net or one not built by %s", method, constructor)
}

// embed looks up a ragged batch of ids in table, keeping its offsets.
func embed(t *graph.Tape, table *layers.Embedding, words *tensor.Ragged) graph.Seq {
	if words == nil {
		return graph.Seq{Values: t.Fail(fmt.Errorf("sentiment: no words in the batch"))}
	}
	return table.LookupSeq(t, words)
}

// Loss is the trainer's loss: the mean cross-entropy of the batch's labels
// (the batch on m's device: the trainer moves it, train.Config.Device).
func Loss(m Model) train.LossFunc[*data.Batch] {
	return func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
		return graph.SoftmaxCrossEntropy(m.Logits(t, b.Ragged("words")), b.Tensor("label")), b.Len()
	}
}

// Evaluate returns m's accuracy and mean loss on ds in inference mode,
// batch reviews at a time; report, if not nil, gets the reviews done.
func Evaluate(m Model, ds *data.Dataset, batch int, report func(done, total int)) (accuracy, loss float64, err error) {
	if ds == nil || ds.Len() == 0 {
		return 0, 0, fmt.Errorf("sentiment: evaluate on an empty dataset")
	}
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return 0, 0, err
	}
	if m == nil {
		return 0, 0, errors.New("sentiment: evaluate: nil model")
	}
	res, err := train.EvaluateOn(graph.DeviceOf(m.Params()), loader, func(t *graph.Tape, b *data.Batch) (train.Metrics, int, error) {
		res, err := train.Classification(m.Logits(t, b.Ragged("words")), b.Tensor("label"))
		return res, b.Len(), err
	}, report)
	return res["accuracy"], res["loss"], err
}

// Evaluator is Evaluate on ds as the trainer's evaluation: metrics
// "accuracy" and "loss".
func Evaluator(m Model, ds *data.Dataset, batch int) train.Evaluator {
	return func(report func(done, total int)) (train.Metrics, error) {
		acc, loss, err := Evaluate(m, ds, batch, report)
		if err != nil {
			return nil, err
		}
		return train.Metrics{"accuracy": acc, "loss": loss}, nil
	}
}
