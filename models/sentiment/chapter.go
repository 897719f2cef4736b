package sentiment

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/imdb"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Spec is the sentiment chapter, a row of the command line's table.
var Spec = chapter.Spec{
	Name: "sentiment", Title: "IMDB review sentiment: the book's text CNN and stacked LSTM", Models: []string{"cnn", "lstm"},
	Folders: []string{"imdb"}, Unit: "reviews", Epochs: 1, Batch: Batch, LR: LR,
	Inputs: "reviews, one a line → positive or negative and the probabilities",
	New:    func() chapter.Chapter { return &Chapter{Config: ModelConfig{Model: "cnn"}} },
}

// ModelConfig is what a checkpoint records to rebuild the network.
type ModelConfig struct {
	Model string `json:"model"` // cnn or lstm
	Vocab int    `json:"vocab"`
}

// vocabKey is the metadata key of the dictionary.
const vocabKey = "plumb/vocab"

// Chapter trains, evaluates and queries the sentiment classifiers.
type Chapter struct {
	Config ModelConfig
	vocab  *data.Vocab
}

type model struct{ Model }

func (m model) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) { return Loss(m.Model)(t, b) }

// Flags declares --model.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	fs.StringVar(&c.Config.Model, "model", c.Config.Model, "network: cnn (text CNN) or lstm (stacked LSTM)")
}

// Train loads IMDB, builds its dictionary and a fresh network; --limit
// and --test-limit draw reviews at random, so a short run sees both labels.
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	if c.Config.Model != "cnn" && c.Config.Model != "lstm" {
		return nil, fmt.Errorf("train sentiment: --model %q, want cnn or lstm", c.Config.Model)
	}
	d, err := LoadProgress(dir, log)
	if err != nil {
		return nil, err
	}
	c.vocab, c.Config.Vocab = d.Vocab, d.Vocab.Len()
	m, err := New(c.Config.Model, d.Vocab.Len(), tensor.NewRNG(o.Seed))
	if err != nil {
		return nil, err
	}
	trainSet, err := chapter.Limit(d.Train, "--limit", o.Limit, o.Seed, log)
	if err != nil {
		return nil, err
	}
	testSet, err := chapter.Limit(d.Test, "--test-limit", o.TestLimit, o.Seed, log)
	if err != nil {
		return nil, err
	}
	loader, err := data.NewLoader(trainSet, o.Batch, data.Shuffle(o.Seed), data.BalanceBy("words"))
	if err != nil {
		return nil, err
	}
	words := trainSet.Ragged("words").Values.Size()
	return &chapter.Setup{
		Model: model{m}, Train: loader, Evaluate: Evaluator(m, testSet, o.Batch), Monitor: "accuracy", Maximize: true,
		Optimizer: func() (optim.Optimizer, *train.LR, error) {
			opt, err := NewOptimizer(m, o.LR)
			return opt, nil, err
		},
		Describe: fmt.Sprintf("training sentiment %s on %d reviews (%d words), dictionary %d words, testing on %d (Adagrad lr %g, batch %d, seed %d)",
			c.Config.Model, trainSet.Len(), words, d.Vocab.Len(), testSet.Len(), o.LR, o.Batch, o.Seed),
		Record: map[string]any{"model": c.Config.Model, "batch": o.Batch, "lr": o.LR, "seed": o.Seed, "optimizer": "adagrad",
			"train_size": trainSet.Len(), "test_size": testSet.Len(), "vocab": d.Vocab.Len(), "train_words": words},
	}, nil
}

// Restore rebuilds the network and its dictionary from a checkpoint.
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	asked := c.Config.Model
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Config); err != nil {
		return nil, err
	}
	if asked != "" && asked != c.Config.Model {
		return nil, fmt.Errorf("the checkpoint holds the sentiment %s, not the %s (drop --model)", c.Config.Model, asked)
	}
	v, err := chapter.ParseVocab(meta, vocabKey)
	if err != nil {
		return nil, err
	}
	if v.Len() != c.Config.Vocab {
		return nil, fmt.Errorf("sentiment: a dictionary of %d words for a model of %d", v.Len(), c.Config.Vocab)
	}
	c.vocab = v
	m, err := New(c.Config.Model, v.Len(), tensor.NewRNG(0))
	return model{m}, err
}

// Evaluate measures m on the test reviews.
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(model)
	if c == nil || !ok {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	d, err := LoadProgress(dir, log)
	if err != nil {
		return nil, "", err
	}
	if err := chapter.SameVocab("IMDB", c.vocab, d.Vocab); err != nil {
		return nil, "", err
	}
	test, err := chapter.Limit(d.Test, "--test-limit", o.TestLimit, o.Seed, log)
	if err != nil {
		return nil, "", err
	}
	return Evaluator(mm.Model, test, o.Batch), fmt.Sprintf("%d test reviews (%s)", test.Len(), c.Config.Model), nil
}

// Predict prints each review's sentiment and its probabilities.
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(model)
	if c == nil || !ok || out == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", Spec.Name, chapter.WrongModel(Spec.Name, m))
	}
	var names []string
	var seqs [][]int64
	err := chapter.Lines(in, func(line string) error {
		ids, err := c.vocab.Encode(imdb.Tokenize(line))
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			ids = []int64{int64(c.vocab.UnkID())}
		}
		names, seqs = append(names, chapter.Excerpt(line, 40)), append(seqs, ids)
		return nil
	})
	if err != nil {
		return err
	}
	t := graph.NewEvalTape()
	defer t.Release()
	logits, err := mm.Logits(t, data.SeqField("words", seqs).Ragged).Host()
	if err != nil {
		return err
	}
	labels := make([]string, Classes)
	labels[imdb.Positive], labels[imdb.Negative] = "positive", "negative"
	return chapter.Classify(out, names, logits, labels, 0)
}

// Meta records the network's name and dictionary.
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
