package translate

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Spec is the machine translation chapter, a row of the command line's table.
var Spec = chapter.Spec{
	Name: "translate", Title: "English to German: a GRU encoder-decoder with attention", Folders: []string{"multi30k"},
	Unit: "target words", Best: "BLEU", Epochs: 1, Batch: 64, LR: 1e-3,
	Inputs: "English sentences, one a line → German",
	New: func() chapter.Chapter {
		return &Chapter{Config: Sizes{Dropout: DefaultDropout}, MinCount: 2, Beam: 4, MaxLen: 80}
	},
}

// The metadata keys of the dictionaries.
const (
	srcKey      = "plumb/src_vocab"
	trgKey      = "plumb/trg_vocab"
	minCountKey = "plumb/min_count" // the dictionaries' cut-off, which eval rebuilds them with
)

// Chapter trains, evaluates and queries the translation model.
type Chapter struct {
	Config    Sizes // Emb and Hidden 0: DefaultSizes'
	MinCount  int
	Beam      int
	MaxLen    int
	EvalLimit int
	src, trg  *data.Vocab
}

type model struct{ *Model }

func (m model) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) { return m.BatchLoss(t, b) }

// Flags declares the sizes, the dictionary cut-off and the decoding.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	fs.IntVar(&c.Config.Emb, "emb", 0, "embedding width (0: the default)")
	fs.IntVar(&c.Config.Hidden, "hidden", 0, "GRU units and attention units (0: the default)")
	fs.Float64Var(&c.Config.Dropout, "dropout", c.Config.Dropout, "dropout rate on the embeddings and the projection's input (0: none)")
	fs.IntVar(&c.MinCount, "min-count", c.MinCount, "keep training words seen at least this often")
	fs.IntVar(&c.Beam, "beam", c.Beam, "beam width of the BLEU evaluation and of predict")
	fs.IntVar(&c.MaxLen, "max-len", c.MaxLen, "predict: most words of a translation")
	fs.IntVar(&c.EvalLimit, "eval-limit", 0, "compute BLEU on only the first N test2016 sentences (0: all 1000)")
}

// Train loads Multi30k, builds its dictionaries and a fresh model.
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	d, err := LoadData(dir, c.MinCount)
	if err != nil {
		return nil, err
	}
	if d.Train, err = chapter.Limit(d.Train, "--limit", o.Limit, o.Seed, log); err != nil {
		return nil, err
	}
	s := DefaultSizes(d.Src.Len(), d.Trg.Len())
	s.Emb, s.Hidden, s.Attention, s.Dropout = orDefault(c.Config.Emb, s.Emb), orDefault(c.Config.Hidden, s.Hidden), orDefault(c.Config.Hidden, s.Attention), c.Config.Dropout
	c.Config, c.src, c.trg = s, d.Src, d.Trg
	m, err := New(s, tensor.NewRNG(o.Seed))
	if err != nil {
		return nil, err
	}
	def := DefaultConfig()
	var sum float64
	var n int
	began := time.Now()
	tc, err := TrainConfig(m, d, Config{Epochs: 1, Batch: o.Batch, LR: o.LR, ClipNorm: def.ClipNorm, Seed: o.Seed, Beam: c.Beam, EvalLimit: c.EvalLimit,
		Step: func(s train.Step) {
			if sum, n = sum+s.Loss, n+1; o.Every > 0 && s.Step%o.Every == 0 {
				fmt.Fprintf(log, "epoch %d step %d: loss %.4f (mean of the last %d batches), %.0f target words/s, %s\n",
					s.Epoch, s.Step, sum/float64(n), n, s.SamplesPerSec, time.Since(began).Round(time.Second))
				sum, n = 0, 0
			}
		}})
	if err != nil {
		return nil, err
	}
	return &chapter.Setup{
		Model: model{m}, Train: tc.Train, Evaluate: tc.Evaluate, Monitor: tc.Monitor, Maximize: tc.Maximize, Hooks: tc.Hooks, HostFields: HostFields,
		Optimizer: func() (optim.Optimizer, *train.LR, error) {
			opt, err := optim.NewAdam(m.Params(), optim.LR(o.LR), optim.GlobalClipNorm(def.ClipNorm))
			return opt, nil, err
		},
		Describe: fmt.Sprintf("training on %d pairs (vocabularies %d en, %d de; emb %d, hidden %d, dropout %g; Adam lr %g, batch %d, seed %d)",
			d.Train.Len(), d.Src.Len(), d.Trg.Len(), s.Emb, s.Hidden, s.Dropout, o.LR, o.Batch, o.Seed),
		Record: map[string]any{"batch": o.Batch, "lr": o.LR, "seed": o.Seed, "optimizer": "adam", "clip_norm": def.ClipNorm,
			"beam": c.Beam, "emb": s.Emb, "hidden": s.Hidden, "dropout": s.Dropout, "train_size": d.Train.Len()},
	}, nil
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Restore rebuilds the model and its dictionaries from a checkpoint.
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Config); err != nil {
		return nil, err
	}
	var err error
	if c.src, err = chapter.ParseVocab(meta, srcKey); err != nil {
		return nil, err
	}
	if c.trg, err = chapter.ParseVocab(meta, trgKey); err != nil {
		return nil, err
	}
	if mc, ok := meta[minCountKey]; ok {
		if c.MinCount, err = strconv.Atoi(mc); err != nil {
			return nil, fmt.Errorf("translate: the checkpoint's %s %q: %w", minCountKey, mc, err)
		}
	}
	if c.src.Len() != c.Config.Src || c.trg.Len() != c.Config.Trg {
		return nil, fmt.Errorf("translate: vocabularies of %d and %d words for a model of %d and %d", c.src.Len(), c.trg.Len(), c.Config.Src, c.Config.Trg)
	}
	m, err := New(c.Config, tensor.NewRNG(0))
	return model{m}, err
}

// Evaluate measures m's validation loss and its BLEU on test2016.
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(model)
	if c == nil || !ok {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	d, err := LoadData(dir, c.MinCount)
	if err != nil {
		return nil, "", err
	}
	if err := chapter.SameVocab("English", c.src, d.Src); err != nil {
		return nil, "", fmt.Errorf("%w (with --min-count %d)", err, c.MinCount)
	}
	if err := chapter.SameVocab("German", c.trg, d.Trg); err != nil {
		return nil, "", fmt.Errorf("%w (with --min-count %d)", err, c.MinCount)
	}
	tc, err := TrainConfig(mm.Model, d, Config{Epochs: 1, Batch: o.Batch, LR: o.LR, Beam: c.Beam, EvalLimit: c.EvalLimit})
	if err != nil {
		return nil, "", err
	}
	return tc.Evaluate, fmt.Sprintf("Multi30k val (%d pairs) and test2016 (beam %d)", d.Val.Len(), c.Beam), nil
}

// Predict translates each line, a batch of up to 64 lines at a time.
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(model)
	if c == nil || !ok || out == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", Spec.Name, chapter.WrongModel(Spec.Name, m))
	}
	cfg := decode.Config{BeamWidth: c.Beam, MaxLen: c.MaxLen, Norm: decode.Average}
	var seqs [][]int64
	flush := func() error {
		if len(seqs) == 0 {
			return nil
		}
		res, err := mm.Translate(data.SeqField("src", seqs).Ragged, c.trg, cfg)
		if err != nil {
			return err
		}
		for _, ws := range res {
			fmt.Fprintln(out, strings.Join(ws, " "))
		}
		seqs = seqs[:0]
		return nil
	}
	err := chapter.Lines(in, func(line string) error {
		ids, err := c.src.Encode(append(append([]string{data.BOS}, Tokenize(line)...), data.EOS))
		if err != nil {
			return err
		}
		if seqs = append(seqs, ids); len(seqs) == 64 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// Meta records the sizes and both dictionaries.
func (c *Chapter) Meta() (map[string]string, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	src, err := chapter.VocabMeta(c.src)
	if err != nil {
		return nil, err
	}
	trg, err := chapter.VocabMeta(c.trg)
	if err != nil {
		return nil, err
	}
	return chapter.EncodeMeta(Spec.Name, c.Config, map[string]string{srcKey: src, trgKey: trg, minCountKey: strconv.Itoa(c.MinCount)})
}
