package word2vec

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Spec is the word2vec chapter, a row of the command line's table.
var Spec = chapter.Spec{
	Name: "word2vec", Title: "the N-gram language model and its word vectors", Folders: []string{"ptb"},
	Unit: "5-grams", Epochs: 3, Batch: Batch, LR: LR,
	Inputs: "words, one a line → their nearest words by embedding",
	New:    func() chapter.Chapter { return &Chapter{K: 10} },
}

// vocabKey is the metadata key of the dictionary.
const vocabKey = "plumb/vocab"

// Chapter trains, evaluates and queries the N-gram model.
type Chapter struct {
	Config struct {
		Vocab int `json:"vocab"`
	}
	K     int // neighbours a word
	vocab *data.Vocab
}

type model struct{ *Model }

func (m model) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) { return m.BatchLoss(t, b) }

// Flags declares --k, the neighbours predict prints.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	fs.IntVar(&c.K, "k", c.K, "predict: how many neighbours of each word")
}

// Train loads PTB, builds its dictionary and a fresh model.
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	d, err := Load(dir)
	if err != nil {
		return nil, err
	}
	c.vocab, c.Config.Vocab = d.Vocab, d.Vocab.Len()
	m, err := New(d.Vocab.Len(), tensor.NewRNG(o.Seed))
	if err != nil {
		return nil, err
	}
	trainSet, err := chapter.Limit(d.Train, "--limit", o.Limit, o.Seed, log)
	if err != nil {
		return nil, err
	}
	loader, err := data.NewLoader(trainSet, o.Batch, data.Shuffle(o.Seed))
	if err != nil {
		return nil, err
	}
	return &chapter.Setup{
		Model: model{m}, Train: loader, Monitor: "test_cost",
		Evaluate: m.Evaluator(1000, Split{Name: "valid", Set: d.Valid}, Split{Name: "test", Set: d.Test}),
		Optimizer: func() (optim.Optimizer, *train.LR, error) {
			opt, err := NewOptimizer(m, o.LR)
			return opt, nil, err
		},
		Describe: fmt.Sprintf("training word2vec on %d 5-grams of PTB train, dictionary %d words, testing on %d (valid) and %d (test) (Adagrad lr %g, L2 %g, batch %d, seed %d)",
			trainSet.Len(), d.Vocab.Len(), d.Valid.Len(), d.Test.Len(), o.LR, L2, o.Batch, o.Seed),
		Record: map[string]any{"batch": o.Batch, "lr": o.LR, "l2": L2, "seed": o.Seed, "optimizer": "adagrad",
			"train_size": trainSet.Len(), "test_size": d.Test.Len(), "vocab": d.Vocab.Len()},
	}, nil
}

// Restore rebuilds the model and its dictionary from a checkpoint.
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Config); err != nil {
		return nil, err
	}
	v, err := chapter.ParseVocab(meta, vocabKey)
	if err != nil {
		return nil, err
	}
	if v.Len() != c.Config.Vocab {
		return nil, fmt.Errorf("word2vec: a dictionary of %d words for a model of %d", v.Len(), c.Config.Vocab)
	}
	c.vocab = v
	m, err := New(v.Len(), tensor.NewRNG(0))
	return model{m}, err
}

// Evaluate measures m's cost on PTB's valid and test files.
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(model)
	if c == nil || !ok {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	d, err := Load(dir)
	if err != nil {
		return nil, "", err
	}
	if err := chapter.SameVocab("PTB", c.vocab, d.Vocab); err != nil {
		return nil, "", err
	}
	return mm.Evaluator(1000, Split{Name: "valid", Set: d.Valid}, Split{Name: "test", Set: d.Test}),
		fmt.Sprintf("PTB valid (%d 5-grams) and test (%d)", d.Valid.Len(), d.Test.Len()), nil
}

// Predict prints, for each word, its K nearest words by the dot product
// of their embeddings.
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(model)
	if c == nil || !ok || out == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", Spec.Name, chapter.WrongModel(Spec.Name, m))
	}
	return chapter.Lines(in, func(word string) error {
		id := c.vocab.ID(word)
		if id == c.vocab.UnkID() && word != data.Unk {
			fmt.Fprintf(out, "%s\t(not in the dictionary of %d words)\n", word, c.vocab.Len())
			return nil
		}
		near, err := mm.Similar(id, c.K)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\t", word)
		for i, n := range near {
			if i > 0 {
				fmt.Fprint(out, " ")
			}
			fmt.Fprintf(out, "%s %.4f", c.vocab.Word(n.ID), n.Score)
		}
		fmt.Fprintln(out)
		return nil
	})
}

// Meta records the dictionary.
func (c *Chapter) Meta() (map[string]string, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	v, err := chapter.VocabMeta(c.vocab)
	if err != nil {
		return nil, err
	}
	return chapter.EncodeMeta(Spec.Name, c.Config, map[string]string{vocabKey: v})
}
