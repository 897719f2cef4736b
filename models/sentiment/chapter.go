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

// Predict prints each review's sentiment and its probabilities
// (chapter.PredictPlanned).
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	return chapter.PredictPlanned(c, m, in, out)
}

// Plan is predict's parts (reviews).
func (c *Chapter) Plan() (chapter.Planned, error) {
	if c == nil || c.vocab == nil {
		return nil, fmt.Errorf("%s: a chapter without its dictionary (make one with Spec.New, then Train or Restore)", Spec.Name)
	}
	return reviews{c.vocab}, nil
}

// reviews are the parts of predict: review lines encoded with the
// model's dictionary, their logits, and both labels' probabilities.
type reviews struct{ vocab *data.Vocab }

// Queries reads one review a line, tokenized as the IMDB reader does and
// encoded with the model's dictionary (a review with no known word is
// one unknown word); each is named by its first 40 characters.
func (r reviews) Queries(m chapter.Model, in chapter.Input) (*chapter.Queries, error) {
	if _, err := chapter.ModelAs[model](Spec.Name, m); err != nil {
		return nil, err
	}
	var names []string
	var seqs [][]int64
	err := chapter.Lines(in, func(line string) error {
		ids, err := r.vocab.Encode(imdb.Tokenize(line))
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			ids = []int64{int64(r.vocab.UnkID())}
		}
		names, seqs = append(names, chapter.Excerpt(line, 40)), append(seqs, ids)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return chapter.SeqQueries(names, seqs)
}

// Forward is the network's logits of a ragged batch of reviews, given as
// its ids and offsets (chapter.SeqInputs); the offsets (input 1) fix the
// pass.
func (reviews) Forward(m chapter.Model) (func(*graph.Tape, []*tensor.Tensor) *graph.Value, []int, error) {
	mm, err := chapter.ModelAs[model](Spec.Name, m)
	if err != nil {
		return nil, nil, err
	}
	return func(t *graph.Tape, in []*tensor.Tensor) *graph.Value {
		words, err := chapter.RaggedInputs(in)
		if err != nil {
			return t.Fail(err)
		}
		return mm.Logits(t, words)
	}, []int{1}, nil
}

// Example is batch reviews of seqLen words, each the dictionary's word 0.
func (reviews) Example(m chapter.Model, batch, seqLen int) ([]*tensor.Tensor, error) {
	if _, err := chapter.ModelAs[model](Spec.Name, m); err != nil {
		return nil, err
	}
	if batch < 1 || seqLen < 1 {
		return nil, fmt.Errorf("%s: example of %d reviews of %d words, want at least 1 of 1", Spec.Name, batch, seqLen)
	}
	seqs := make([][]int64, batch)
	for i := range seqs {
		seqs[i] = make([]int64, seqLen)
	}
	return chapter.SeqInputs(seqs)
}

// Report prints each review's sentiment and both probabilities.
func (reviews) Report(out io.Writer, names []string, logits *tensor.Tensor) error {
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
