package bert

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/imdb"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/text"
)

// The fields of the IMDB datasets the BERT chapters train on: the word
// pieces of a review as [CLS] pieces [SEP] (ragged int64) and its class.
const (
	idsField   = "ids"
	labelField = "label"
)

// reviewText is a review as the chapters' tokenizer reads it: the words
// of the book's IMDB reader (punctuation deleted, lower-cased), so that
// the text CNN and LSTM of the sentiment chapter and BERT see the same
// words.
func reviewText(r imdb.Review) string { return strings.Join(r.Tokens, " ") }

// learnVocab learns a WordPiece vocabulary of size tokens from reviews
// (the training reviews only: the test reviews never shape the model).
func learnVocab(reviews []imdb.Review, size int, log io.Writer) (*text.WordPiece, []string, error) {
	counts := text.NewWordCounts(text.WordPieceConfig{})
	for _, r := range reviews {
		counts.Add(reviewText(r))
	}
	if log != nil {
		fmt.Fprintf(log, "learning a WordPiece vocabulary of %d tokens from the %d distinct words of %d reviews\n", size, counts.Len(), len(reviews))
	}
	tokens, err := text.LearnWordPiece(counts, text.LearnOptions{Size: size})
	if err != nil {
		return nil, nil, err
	}
	wp, err := text.NewWordPiece(tokens, text.WordPieceConfig{})
	return wp, tokens, err
}

// encodeReview returns [CLS] pieces [SEP] of s, the pieces cut so that
// the whole is at most seqLen ids.
func encodeReview(wp *text.WordPiece, s string, seqLen int) ([]int64, error) {
	enc, err := wp.Encode(s, seqLen)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(enc.IDs))
	for i, id := range enc.IDs {
		ids[i] = int64(id)
	}
	return ids, nil
}

// reviewSet encodes reviews into a dataset of fields ids and label.
func reviewSet(wp *text.WordPiece, reviews []imdb.Review, seqLen int) (*data.Dataset, error) {
	ids := make([][]int64, len(reviews))
	labels := make([]int64, len(reviews))
	for i, r := range reviews {
		seq, err := encodeReview(wp, reviewText(r), seqLen)
		if err != nil {
			return nil, fmt.Errorf("bert: review %d: %w", i, err)
		}
		ids[i], labels[i] = seq, r.Label
	}
	return data.NewDataset(data.SeqField(idsField, ids), data.DenseField(labelField, tensor.MustFromSlice(labels, len(labels))))
}

// batchOf pads a loader batch's ids into a Batch on the device of m's
// parameters.
func batchOf(t *graph.Tape, m *Model, b *data.Batch) (Batch, error) {
	if b == nil {
		return Batch{}, errors.New("bert: a nil batch")
	}
	r := b.Ragged(idsField)
	if r == nil {
		return Batch{}, fmt.Errorf("bert: the batch has no ragged field %q (fields %v)", idsField, b.Names())
	}
	ids, err := r.Values.Cast(tensor.Int64)
	if err != nil {
		return Batch{}, err
	}
	all := ids.Int64s()
	seqs := make([][]int, len(r.Offsets)-1)
	for i := range seqs {
		s := all[r.Offsets[i]:r.Offsets[i+1]]
		seqs[i] = make([]int, len(s))
		for j, v := range s {
			seqs[i][j] = int(v)
		}
	}
	pb, err := NewBatch(seqs, nil)
	if err != nil {
		return Batch{}, err
	}
	return pb.To(t, m, graph.DeviceOf(m.params))
}

// special reports whether an id is one of the vocabulary's first n
// tokens, the special ones LearnWordPiece puts first.
func special(n int) func(id int) bool { return func(id int) bool { return id < n } }

// maskedLoss is the masked-LM loss of a batch: its ids corrupted by
// MaskTokens (drawing from rng) and the mean cross-entropy of the chosen
// positions' original ids; the count is of the batch's reviews, the
// chapter's unit.
func maskedLoss(t *graph.Tape, m *MaskedLM, b *data.Batch, cfg MaskConfig, rng *rand.Rand) (*graph.Value, int) {
	logits, labels, err := maskedLogits(t, m, b, cfg, rng)
	if err != nil {
		return t.Fail(err), 0
	}
	return graph.SoftmaxCrossEntropy(logits, labels), b.Len()
}

// maskedLogits corrupts b and returns the logits of the chosen positions
// with their labels.
func maskedLogits(t *graph.Tape, m *MaskedLM, b *data.Batch, cfg MaskConfig, rng *rand.Rand) (*graph.Value, *tensor.Tensor, error) {
	if m == nil || m.Bert == nil {
		return nil, nil, errors.New("bert: masked-LM loss of a nil model")
	}
	host, err := batchOf(t, m.Bert, b)
	if err != nil {
		return nil, nil, err
	}
	if host.IDs.Device() != nil {
		return nil, nil, errors.New("bert: masked-LM training runs in host memory (the masking draws there)")
	}
	masked, err := MaskTokens(host, cfg, rng)
	if err != nil {
		return nil, nil, err
	}
	return m.Logits(t, masked.Batch, masked.Rows), masked.Labels, nil
}
