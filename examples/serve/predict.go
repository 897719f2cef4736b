package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/plumbml/plumb/data/imdb"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

// Prediction is one input's answer: the most probable class and the
// probabilities of all classes (the softmax of the model's logits).
type Prediction struct {
	Class int
	Probs []float32
}

// Pixels is the number of values of one MNIST image, 28×28, row-major,
// white digit on black, scaled to [0, 1] by p/255 as data/mnist scales
// its training images.
const Pixels = 28 * 28

// tapes hands each Predict call its own inference tape: a tape is not safe
// for concurrent use (docs/deploying.md), so concurrent calls take
// different tapes from the pool, and each call Releases its tape before
// returning it, so the pool holds no request's tensors.
type tapes struct{ pool sync.Pool }

func newTapes() *tapes {
	return &tapes{pool: sync.Pool{New: func() any { return graph.NewEvalTape() }}}
}

func (p *tapes) get() *graph.Tape { return p.pool.Get().(*graph.Tape) }

func (p *tapes) put(t *graph.Tape) {
	t.Release()
	p.pool.Put(t)
}

// DigitPredictor runs an MNIST classifier (models/mnist's CNN or MLP) on
// batches of images of Pixels values each, on a per-call eval tape. It
// implements Predictor[[]float32, Prediction].
type DigitPredictor struct {
	net   mnist.Model
	tapes *tapes
}

// NewDigitPredictor wraps net, whose parameters must not change while it
// serves (an eval tape caches their GEMM packings until Release).
func NewDigitPredictor(net mnist.Model) (*DigitPredictor, error) {
	if net == nil {
		return nil, errors.New("serve: digit predictor: nil model")
	}
	return &DigitPredictor{net: net, tapes: newTapes()}, nil
}

// Predict stacks the images into [N, 1, 28, 28], runs the model and
// returns each row's softmax.
func (p *DigitPredictor) Predict(ctx context.Context, batch [][]float32) ([]Prediction, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	x := make([]float32, 0, len(batch)*Pixels)
	for i, img := range batch {
		if len(img) != Pixels {
			return nil, fmt.Errorf("serve: digit predictor: image %d has %d values, want %d (28×28)", i, len(img), Pixels)
		}
		x = append(x, img...)
	}
	in, err := tensor.FromSlice(x, len(batch), 1, 28, 28)
	if err != nil {
		return nil, fmt.Errorf("serve: digit predictor: %w", err)
	}
	t := p.tapes.get()
	defer p.tapes.put(t)
	return softmaxRows(p.net.Forward(t.Const(in)), len(batch), "digit predictor")
}

// SentimentPredictor runs a models/sentiment classifier (the text CNN or
// the stacked LSTM) on batches of reviews given as word ids of the
// model's vocabulary, as one ragged batch on a per-call eval tape. It
// implements Predictor[[]int64, Prediction]; Encode turns text into ids.
type SentimentPredictor struct {
	net   sentiment.Model
	vocab interface {
		Encode([]string) ([]int64, error)
		Len() int
	}
	tapes *tapes
}

// NewSentimentPredictor wraps net and the vocabulary it was trained with
// (a data.Vocab).
func NewSentimentPredictor(net sentiment.Model, vocab interface {
	Encode([]string) ([]int64, error)
	Len() int
}) (*SentimentPredictor, error) {
	if net == nil || vocab == nil {
		return nil, fmt.Errorf("serve: sentiment predictor: needs a model and a vocabulary (got %v, %v)", net, vocab)
	}
	return &SentimentPredictor{net: net, vocab: vocab, tapes: newTapes()}, nil
}

// errEmptyReview is Encode's error for a review with no words.
var errEmptyReview = errors.New("the review has no words (after removing punctuation, as the IMDB reader does)")

// Encode tokenizes text as the IMDB reader does (imdb.Tokenize) and maps
// the words to ids, unknown words to the vocabulary's <unk>. A text with
// no words is an error.
func (p *SentimentPredictor) Encode(text string) ([]int64, error) {
	words := imdb.Tokenize(text)
	if len(words) == 0 {
		return nil, errEmptyReview
	}
	return p.vocab.Encode(words)
}

// Predict concatenates the reviews into one ragged batch (no padding),
// runs the model and returns each review's softmax over the two labels
// (imdb.Positive, imdb.Negative).
func (p *SentimentPredictor) Predict(ctx context.Context, batch [][]int64) ([]Prediction, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	offsets := make([]int, 1, len(batch)+1)
	total := 0
	for i, ids := range batch {
		if len(ids) == 0 {
			return nil, fmt.Errorf("serve: sentiment predictor: review %d is empty", i)
		}
		for _, id := range ids {
			if id < 0 || id >= int64(p.vocab.Len()) {
				return nil, fmt.Errorf("serve: sentiment predictor: review %d: id %d outside the vocabulary [0, %d)", i, id, p.vocab.Len())
			}
		}
		total += len(ids)
		offsets = append(offsets, total)
	}
	ids := make([]int64, 0, total)
	for _, r := range batch {
		ids = append(ids, r...)
	}
	vals, err := tensor.FromSlice(ids, total)
	if err != nil {
		return nil, fmt.Errorf("serve: sentiment predictor: %w", err)
	}
	words, err := tensor.NewRagged(vals, offsets)
	if err != nil {
		return nil, fmt.Errorf("serve: sentiment predictor: %w", err)
	}
	t := p.tapes.get()
	defer p.tapes.put(t)
	return softmaxRows(p.net.Logits(t, words), len(batch), "sentiment predictor")
}

// softmaxRows takes the softmax of logits [n, classes] along the classes
// and copies each row out (the tape's tensors go back to its pool on
// Release).
func softmaxRows(logits *graph.Value, n int, who string) ([]Prediction, error) {
	probs, err := graph.Softmax(logits, 1).Host()
	if err != nil {
		return nil, fmt.Errorf("serve: %s: %w", who, err)
	}
	shape := probs.Shape()
	if len(shape) != 2 || shape[0] != n || shape[1] < 1 {
		return nil, fmt.Errorf("serve: %s: model output shape %v, want [%d, classes]", who, shape, n)
	}
	all := probs.Float32s()
	if all == nil {
		return nil, fmt.Errorf("serve: %s: model output dtype %v, want float32", who, probs.DType())
	}
	return predictions(all, n, shape[1]), nil
}

// predictions copies the first n rows of all, probabilities [_, classes]
// row-major, into Predictions, each with its most probable class.
func predictions(all []float32, n, classes int) []Prediction {
	out := make([]Prediction, n)
	for i := range out {
		row := make([]float32, classes)
		copy(row, all[i*classes:(i+1)*classes])
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		out[i] = Prediction{Class: best, Probs: row}
	}
	return out
}
