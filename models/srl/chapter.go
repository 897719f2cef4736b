package srl

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/conll05"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Spec is the semantic role labelling chapter, a row of the command line's table.
var Spec = chapter.Spec{
	Name: "srl", Title: "semantic role labelling: db_lstm with a CRF", Folders: []string{"conll05"},
	Unit: "sequences", Best: "held-out F1", Epochs: 1, Batch: 10, LR: 0.01,
	Inputs: "sentences with the predicate in brackets (The cat [saw|see] fish .) → a tag for each word",
	New:    func() chapter.Chapter { return &Chapter{Config: ModelConfig{HeldOut: 0.1, CRFLR: 1e-3}} },
}

// ModelConfig is what a checkpoint records: the sizes, and the held-out
// split (fraction and seed) that eval measures on.
type ModelConfig struct {
	Sizes   Sizes   `json:"sizes"`
	HeldOut float64 `json:"heldout"`
	Seed    uint64  `json:"seed"`
	CRFLR   float64 `json:"crf_lr"`
}

// The metadata keys of the dictionaries.
const (
	wordsKey  = "plumb/words"
	verbsKey  = "plumb/verbs"
	labelsKey = "plumb/labels"
)

// Chapter trains, evaluates and queries db_lstm.
type Chapter struct {
	Config ModelConfig
	d      *Data // the dictionaries (and, when loaded, the data)
}

// Flags declares --crf-lr and --heldout.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	fs.Float64Var(&c.Config.CRFLR, "crf-lr", c.Config.CRFLR, "factor on the learning rate of the CRF's parameters")
	fs.Float64Var(&c.Config.HeldOut, "heldout", c.Config.HeldOut, "fraction of the propositions held out for evaluation")
}

// Train loads CoNLL-05, holds out a part, and builds a fresh model.
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	d, err := LoadData(dir, c.Config.HeldOut, o.Seed)
	if err != nil {
		return nil, err
	}
	if d.Train, err = chapter.Limit(d.Train, "--limit", o.Limit, o.Seed, log); err != nil {
		return nil, err
	}
	c.d, c.Config.Sizes, c.Config.Seed = d, d.Sizes(), o.Seed
	m, err := New(d.Sizes(), tensor.NewRNG(o.Seed))
	if err != nil {
		return nil, err
	}
	tc, err := TrainConfig(m, d, Config{Epochs: 1, Batch: o.Batch, LR: o.LR, CRFLR: c.Config.CRFLR, Seed: o.Seed, Log: log, LogEvery: o.Every})
	if err != nil {
		return nil, err
	}
	return &chapter.Setup{
		Model: m, Train: tc.Train, Evaluate: tc.Evaluate, Monitor: tc.Monitor, Maximize: tc.Maximize, Hooks: tc.Hooks,
		Optimizer: func() (optim.Optimizer, *train.LR, error) { return Optimizer(m, o.LR, c.Config.CRFLR) },
		Describe: fmt.Sprintf("training db_lstm on %d propositions, holding out %d (%d words, %d verbs, %d tags; SGD lr %g, CRF x%g, batch %d, seed %d)",
			d.Train.Len(), d.HeldOut.Len(), d.Words.Len(), d.Verbs.Len(), d.Labels.Len(), o.LR, c.Config.CRFLR, o.Batch, o.Seed),
		Record: map[string]any{"batch": o.Batch, "lr": o.LR, "crf_lr": c.Config.CRFLR, "seed": o.Seed, "optimizer": "sgd",
			"train_size": d.Train.Len(), "heldout_size": d.HeldOut.Len()},
	}, nil
}

// Restore rebuilds the model and its dictionaries from a checkpoint.
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Config); err != nil {
		return nil, err
	}
	c.d = &Data{}
	for _, v := range []struct {
		key string
		dst **data.Vocab
	}{{wordsKey, &c.d.Words}, {verbsKey, &c.d.Verbs}, {labelsKey, &c.d.Labels}} {
		var err error
		if *v.dst, err = chapter.ParseVocab(meta, v.key); err != nil {
			return nil, err
		}
	}
	if c.d.Sizes() != c.Config.Sizes {
		return nil, fmt.Errorf("srl: dictionaries of %+v for a model of %+v", c.d.Sizes(), c.Config.Sizes)
	}
	return New(c.Config.Sizes, tensor.NewRNG(0))
}

// Evaluate measures m on the propositions its training held out (the
// same fraction and seed).
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(*Model)
	if c == nil || !ok {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	d, err := LoadData(dir, c.Config.HeldOut, c.Config.Seed)
	if err != nil {
		return nil, "", err
	}
	for _, v := range [][3]any{{"word", c.d.Words, d.Words}, {"verb", c.d.Verbs, d.Verbs}, {"tag", c.d.Labels, d.Labels}} {
		if err := chapter.SameVocab(v[0].(string), v[1].(*data.Vocab), v[2].(*data.Vocab)); err != nil {
			return nil, "", err
		}
	}
	return func(report func(done, total int)) (train.Metrics, error) {
		r, err := Evaluate(mm, d, d.HeldOut, 100, report)
		return train.Metrics{"precision": r.Precision, "recall": r.Recall, "f1": r.F1, "loss": r.Loss}, err
	}, fmt.Sprintf("%d held-out propositions", d.HeldOut.Len()), nil
}

// Predict tags each sentence's words for its predicate, which the line
// marks in brackets: [word] (its lemma the word in lower case) or
// [word|lemma].
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(*Model)
	if c == nil || !ok || out == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", Spec.Name, chapter.WrongModel(Spec.Name, m))
	}
	return chapter.Lines(in, func(line string) error {
		ex, err := parseMarked(line)
		if err != nil {
			return err
		}
		if !c.d.Verbs.Has(ex.Predicate) {
			fmt.Fprintf(out, "%s\t(predicate %q is not in the verb dictionary of %d)\n", line, ex.Predicate, c.d.Verbs.Len())
			return nil
		}
		ds, err := conll05.Dataset([]conll05.Example{ex}, c.d.Words, c.d.Verbs, c.d.Labels)
		if err != nil {
			return err
		}
		loader, err := data.NewLoader(ds, 1)
		if err != nil {
			return err
		}
		t := graph.NewEvalTape()
		defer t.Release()
		for b, err := range loader.Batches(0) {
			if err != nil {
				return err
			}
			paths, err := mm.Decode(t, b)
			if err != nil {
				return err
			}
			tagged := make([]string, len(ex.Words))
			for i, w := range ex.Words {
				tagged[i] = w + "/" + c.d.Labels.Word(paths[0][i])
			}
			fmt.Fprintln(out, strings.Join(tagged, " "))
		}
		return nil
	})
}

// parseMarked reads a sentence with one bracketed predicate into an
// example whose tags are all O but the predicate's B-V.
func parseMarked(line string) (conll05.Example, error) {
	var ex conll05.Example
	for _, w := range strings.Fields(line) {
		tag := "O"
		if strings.HasPrefix(w, "[") && strings.HasSuffix(w, "]") {
			if ex.Predicate != "" {
				return ex, fmt.Errorf("%q: two predicates in brackets; mark one", line)
			}
			word, lemma, ok := strings.Cut(w[1:len(w)-1], "|")
			if !ok {
				lemma = strings.ToLower(word)
			}
			w, ex.Predicate, tag = word, lemma, "B-V"
		}
		ex.Words, ex.Labels = append(ex.Words, w), append(ex.Labels, tag)
	}
	if ex.Predicate == "" {
		return ex, fmt.Errorf("%q: no predicate: put it in brackets, [saw] or [saw|see]", line)
	}
	return ex, nil
}

// Meta records the sizes, the held-out split and the dictionaries.
func (c *Chapter) Meta() (map[string]string, error) {
	if c == nil || c.d == nil {
		return nil, chapter.ErrNilChapter
	}
	extra := map[string]string{}
	for k, v := range map[string]*data.Vocab{wordsKey: c.d.Words, verbsKey: c.d.Verbs, labelsKey: c.d.Labels} {
		s, err := chapter.VocabMeta(v)
		if err != nil {
			return nil, err
		}
		extra[k] = s
	}
	return chapter.EncodeMeta(Spec.Name, c.Config, extra)
}
