package transformer

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/text"
	"github.com/plumbml/plumb/train"
)

// Spec is the Transformer translation chapter, a row of the command
// line's table. Its --batch is a token budget (TokenBatches), and --lr the
// peak of the warmup schedule.
var Spec = chapter.Spec{
	Name: "transformer", Title: "English to German: a Transformer over a shared BPE vocabulary", Folders: []string{"multi30k"},
	Unit: "target tokens", Best: "BLEU", Epochs: 30, Batch: 4096, LR: 1e-3,
	Inputs: "English sentences, one a line → German",
	New: func() chapter.Chapter {
		return &Chapter{Recipe: DefaultRecipe()}
	},
}

// Recipe is the chapter's configuration: the model's sizes and how it
// learns and decodes. A checkpoint keeps it.
type Recipe struct {
	Model     Config
	Merges    int     // BPE merges learned on the training set
	Smoothing float64 // label smoothing
	Warmup    int     // steps of linear warmup before the inverse square root
	Clip      float64 // global gradient norm clipping (0: none)
	Beam      int     // beam width of BLEU and predict
	Alpha     float64 // GNMT length penalty exponent
	DecodeLen int     // most tokens a translation has
}

// DefaultRecipe is the book's Transformer for Multi30k: 3 layers of
// d_model 256, 8 heads and a feed-forward of 1024, pre-norm, dropout 0.1,
// positions up to 128; 8,000 BPE merges; label smoothing 0.1 (Vaswani et
// al. 2017 section 5.4); Noam's warmup over 800 steps; gradients clipped
// to a global norm of 1; beam 4 with GNMT's length penalty alpha 0.6 (Wu
// et al. 2016 section 7).
func DefaultRecipe() Recipe {
	return Recipe{
		Model:  Config{DModel: 256, Heads: 8, FF: 1024, Layers: 3, MaxLen: 128, PreNorm: true, Dropout: 0.1},
		Merges: 8000, Smoothing: 0.1, Warmup: 800, Clip: 1, Beam: 4, Alpha: 0.6, DecodeLen: 100,
	}
}

// The metadata key of the BPE's alphabet and merges.
const bpeKey = "plumb/bpe"

// Chapter trains, evaluates and queries the Transformer.
type Chapter struct {
	Recipe
	PostNorm bool
	Export   string // train: write the BPE, the encoded data and the batches here (WriteExport)
	bpe      *text.BPE
}

// model is the chapter's view of a Model: its loss with the recipe's
// label smoothing.
type model struct {
	*Model
	eps float64
}

func (m model) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
	return m.BatchLoss(t, b, m.eps)
}

// Flags declares the sizes, the BPE, the schedule and the decoding.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	r := &c.Recipe
	fs.IntVar(&r.Model.Layers, "layers", r.Model.Layers, "encoder and decoder layers")
	fs.IntVar(&r.Model.DModel, "d-model", r.Model.DModel, "model width")
	fs.IntVar(&r.Model.Heads, "heads", r.Model.Heads, "attention heads")
	fs.IntVar(&r.Model.FF, "ffn", r.Model.FF, "feed-forward units")
	fs.Float64Var(&r.Model.Dropout, "dropout", r.Model.Dropout, "dropout on attention weights and residual branches")
	fs.BoolVar(&c.PostNorm, "post-norm", false, "layer norm after each residual (the 2017 paper's) instead of before")
	fs.IntVar(&r.Merges, "merges", r.Merges, "BPE merges learned on the training set (English and German together)")
	fs.Float64Var(&r.Smoothing, "smoothing", r.Smoothing, "label smoothing")
	fs.IntVar(&r.Warmup, "warmup", r.Warmup, "steps of linear warmup to --lr, then lr·sqrt(warmup/step) (Noam)")
	fs.Float64Var(&r.Clip, "clip", r.Clip, "clip gradients to this global norm (0: none)")
	fs.IntVar(&r.Beam, "beam", r.Beam, "beam width of the BLEU evaluation and of predict")
	fs.Float64Var(&r.Alpha, "alpha", r.Alpha, "GNMT length penalty exponent ((5+len)/6)^alpha (0: none)")
	fs.IntVar(&r.DecodeLen, "decode-len", r.DecodeLen, "most subword tokens of a translation")
	fs.StringVar(&c.Export, "export", "", "train: write the BPE, the encoded data and the training batches to this folder (for bench/transformer_torch.py)")
}

// Train loads Multi30k, learns the BPE and builds a fresh model.
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	if c.PostNorm {
		c.Model.PreNorm = false
	}
	began := time.Now()
	d, err := LoadData(dir, nil, c.Merges, c.Model.MaxLen)
	if err != nil {
		return nil, err
	}
	c.bpe, c.Model.Vocab = d.BPE, d.BPE.Len()
	fmt.Fprintf(log, "BPE: %d merges learned on %d training pairs (English and German together), a shared vocabulary of %d subwords; %d pairs over %d subwords left out (%s)\n",
		len(d.BPE.Merges()), len(d.Train)+d.Skipped, d.BPE.Len(), d.Skipped, c.Model.MaxLen, time.Since(began).Round(time.Millisecond))
	ds, err := Dataset(d.Train)
	if err != nil {
		return nil, err
	}
	if ds, err = chapter.Limit(ds, "--limit", o.Limit, o.Seed, log); err != nil {
		return nil, err
	}
	batches, err := NewTokenBatches(ds, o.Batch, o.Seed)
	if err != nil {
		return nil, err
	}
	if c.Export != "" {
		if err := WriteExport(c.Export, d, ds, batches); err != nil {
			return nil, err
		}
		fmt.Fprintf(log, "exported the BPE, the data and %d batches to %s\n", len(batches.groups), c.Export)
	}
	pcg := rand.NewPCG(o.Seed, 0x7472616e73)
	m, err := New(c.Model, rand.New(pcg))
	if err != nil {
		return nil, err
	}
	mm := model{m, c.Smoothing}
	eval, err := c.evaluator(mm, d, o)
	if err != nil {
		return nil, err
	}
	var sum float64
	var n int
	hook := train.Hooks{Step: func(s train.Step) error {
		if sum, n = sum+s.Loss, n+1; o.Every > 0 && s.Step%o.Every == 0 {
			fmt.Fprintf(log, "epoch %d step %d: loss %.4f (mean of the last %d batches), %.0f target tokens/s, %s\n",
				s.Epoch, s.Step, sum/float64(n), n, s.SamplesPerSec, time.Since(began).Round(time.Second))
			sum, n = 0, 0
		}
		return nil
	}}
	r := c.Recipe
	return &chapter.Setup{
		Model: mm, RNG: pcg, Train: batches, Evaluate: eval, Monitor: "bleu", Maximize: true, Hooks: []train.Hooks{hook},
		HostFields: []string{"src", "trg", "trg_next"},
		Optimizer: func() (optim.Optimizer, *train.LR, error) {
			return c.optimizer(m, o.LR)
		},
		Describe: fmt.Sprintf("training on %d pairs in %d batches of up to %d tokens (shared BPE vocabulary %d; %d layers, d_model %d, %d heads, ffn %d, %s, dropout %g; Adam peak lr %g, warmup %d, label smoothing %g, clip %g; seed %d)",
			ds.Len(), len(batches.groups), o.Batch, c.Model.Vocab, c.Model.Layers, c.Model.DModel, c.Model.Heads, c.Model.FF, norm(c.Model.PreNorm), c.Model.Dropout,
			o.LR, r.Warmup, r.Smoothing, r.Clip, o.Seed),
		Record: map[string]any{"batch_tokens": o.Batch, "lr": o.LR, "seed": o.Seed, "optimizer": "adam", "betas": []float64{0.9, 0.98}, "eps": 1e-9,
			"schedule": "noam", "warmup": r.Warmup, "clip_norm": r.Clip, "smoothing": r.Smoothing, "merges": r.Merges, "vocab": c.Model.Vocab,
			"layers": c.Model.Layers, "d_model": c.Model.DModel, "heads": c.Model.Heads, "ffn": c.Model.FF, "pre_norm": c.Model.PreNorm,
			"dropout": c.Model.Dropout, "beam": r.Beam, "alpha": r.Alpha, "train_size": ds.Len()},
	}, nil
}

func norm(pre bool) string {
	if pre {
		return "pre-norm"
	}
	return "post-norm"
}

// optimizer is Adam with β = (0.9, 0.98) and ε = 1e-9 (Vaswani et al.
// 2017, section 5.3) under Noam's schedule scaled so that its peak, at the
// end of the warmup, is peak; gradients are clipped by global norm.
func (c *Chapter) optimizer(m *Model, peak float64) (optim.Optimizer, *train.LR, error) {
	if c.Warmup < 1 || !(peak > 0) {
		return nil, nil, fmt.Errorf("transformer: warmup %d and peak lr %v; want both positive", c.Warmup, peak)
	}
	sched, err := optim.Noam(m.Cfg.DModel, int64(c.Warmup), peak*math.Sqrt(float64(m.Cfg.DModel)*float64(c.Warmup)))
	if err != nil {
		return nil, nil, err
	}
	opts := []optim.Option{optim.LR(peak), optim.Beta2(0.98), optim.Epsilon(1e-9)}
	if c.Clip > 0 {
		opts = append(opts, optim.GlobalClipNorm(c.Clip))
	}
	opt, err := optim.NewAdam(m.Params(), opts...)
	return opt, train.PerBatch(sched), err
}

// evaluator measures the validation cross-entropy per target token
// (without smoothing) and BLEU-4 on test2016 (all of it, or --test-limit
// sentences of it picked at random with the seed).
func (c *Chapter) evaluator(m model, d *Data, o chapter.Options) (train.Evaluator, error) {
	val, err := Dataset(d.Val)
	if err != nil {
		return nil, err
	}
	valBatches, err := NewTokenBatches(val, 4096, 0)
	if err != nil {
		return nil, err
	}
	src, refs := testSubset(d, o.TestLimit, o.Seed)
	search := Search{BeamWidth: c.Beam, MaxLen: c.DecodeLen, Alpha: c.Alpha}
	return func(report func(done, total int)) (train.Metrics, error) {
		loss, err := train.MeanLossOn(graph.DeviceOf(m.Params()), valBatches, func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
			return m.BatchLoss(t, b, 0)
		}, nil, "src", "trg", "trg_next")
		if err != nil {
			return nil, err
		}
		bleu, _, err := m.BLEU(d.BPE, src, refs, search, 64)
		if err != nil {
			return nil, err
		}
		return train.Metrics{"val_loss": loss, "bleu": bleu.Score}, nil
	}, nil
}

// testSubset is test2016's sources and references, or limit of them at
// random (seeded), in test order.
func testSubset(d *Data, limit int, seed uint64) ([][]int, []string) {
	idx := make([]int, len(d.Test))
	for i := range idx {
		idx[i] = i
	}
	if limit > 0 && limit < len(idx) {
		idx = rand.New(rand.NewPCG(seed, 0x74657374)).Perm(len(idx))[:limit]
		slices.Sort(idx)
	}
	src, refs := make([][]int, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		src[i], refs[i] = d.Test[j].Src, d.TestRefs[j]
	}
	return src, refs
}

// bpeJSON is the BPE as the metadata keeps it.
type bpeJSON struct {
	Alphabet []string    `json:"alphabet"`
	Merges   [][2]string `json:"merges"`
}

// Restore rebuilds the model and its BPE from a checkpoint.
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Recipe); err != nil {
		return nil, err
	}
	s, ok := meta[bpeKey]
	if !ok {
		return nil, fmt.Errorf("transformer: the checkpoint's metadata has no BPE (%q)", bpeKey)
	}
	var bj bpeJSON
	if err := json.Unmarshal([]byte(s), &bj); err != nil {
		return nil, fmt.Errorf("transformer: the checkpoint's BPE: %w", err)
	}
	merges := make([]text.Merge, len(bj.Merges))
	for i, m := range bj.Merges {
		merges[i] = text.Merge{Left: m[0], Right: m[1]}
	}
	bpe, err := text.NewBPE(bj.Alphabet, merges)
	if err != nil {
		return nil, fmt.Errorf("transformer: the checkpoint's BPE: %w", err)
	}
	if bpe.Len() != c.Model.Vocab {
		return nil, fmt.Errorf("transformer: the checkpoint's BPE has %d subwords for a model of %d", bpe.Len(), c.Model.Vocab)
	}
	c.bpe = bpe
	m, err := New(c.Model, rand.New(rand.NewPCG(0, 0)))
	return model{m, c.Smoothing}, err
}

// Evaluate measures m's validation loss and its BLEU on test2016, with
// the checkpoint's BPE.
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(model)
	if c == nil || !ok || c.bpe == nil {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	d, err := LoadData(dir, c.bpe, 0, c.Model.MaxLen)
	if err != nil {
		return nil, "", err
	}
	eval, err := c.evaluator(mm, d, o)
	if err != nil {
		return nil, "", err
	}
	n := len(d.Test)
	if o.TestLimit > 0 && o.TestLimit < n {
		n = o.TestLimit
	}
	return eval, fmt.Sprintf("Multi30k val (%d pairs) and %d test2016 sentences (beam %d, alpha %g)", len(d.Val), n, c.Beam, c.Alpha), nil
}

// Predict translates each line, a batch of up to 64 lines at a time.
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(model)
	if c == nil || !ok || out == nil || c.bpe == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", Spec.Name, chapter.WrongModel(Spec.Name, m))
	}
	search := Search{BeamWidth: c.Beam, MaxLen: c.DecodeLen, Alpha: c.Alpha}
	var src [][]int
	flush := func() error {
		if len(src) == 0 {
			return nil
		}
		res, err := mm.Translate(src, search)
		if err != nil {
			return err
		}
		for _, ids := range res {
			words, err := c.bpe.Decode(ids)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, strings.Join(words, " "))
		}
		src = src[:0]
		return nil
	}
	err := chapter.Lines(in, func(line string) error {
		ids := c.bpe.Encode(Tokenize(line))
		if len(ids)+1 > c.Model.MaxLen {
			ids = ids[:c.Model.MaxLen-1]
		}
		if src = append(src, ids); len(src) == 64 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// Meta records the recipe and the BPE.
func (c *Chapter) Meta() (map[string]string, error) {
	if c == nil || c.bpe == nil {
		return nil, chapter.ErrNilChapter
	}
	bj := bpeJSON{Alphabet: c.bpe.Alphabet()}
	for _, m := range c.bpe.Merges() {
		bj.Merges = append(bj.Merges, [2]string{m.Left, m.Right})
	}
	js, err := json.Marshal(bj)
	if err != nil {
		return nil, err
	}
	return chapter.EncodeMeta(Spec.Name, c.Recipe, map[string]string{bpeKey: string(js)})
}
