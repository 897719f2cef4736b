package bert

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

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/imdb"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/text"
	"github.com/plumbml/plumb/train"
)

// MLMSpec is masked-language-model pretraining on the IMDB training
// reviews (never the test reviews), a row of the command line's table:
// Devlin et al. 2019's recipe at a small size (BERT-mini's 4 layers, 256
// wide, 4 heads), AdamW with linear warm-up and decay.
var MLMSpec = chapter.Spec{
	Name: "bert-mlm", Title: "BERT masked-language-model pretraining on the IMDB training reviews",
	Folders: []string{"imdb"}, Unit: "reviews", Epochs: 10, Batch: 32, LR: 5e-4,
	Inputs: "sentences with [MASK] in them, one a line → the likeliest tokens for each [MASK]",
	New:    func() chapter.Chapter { return &MLMChapter{Config: defaultConfig()} },
}

// ClassifySpec is fine-tuning a BERT, pretrained by bert-mlm
// (--pretrained) or from scratch, for IMDB sentiment.
var ClassifySpec = chapter.Spec{
	Name: "bert-classify", Title: "BERT fine-tuned for IMDB review sentiment (from a bert-mlm checkpoint)",
	Folders: []string{"imdb"}, Unit: "reviews", Epochs: 3, Batch: 32, LR: 1e-4,
	Inputs: "reviews, one a line → positive or negative and the probabilities",
	New:    func() chapter.Chapter { return &ClassifyChapter{Config: defaultConfig()} },
}

// ChapterConfig is what a BERT chapter's checkpoint records to rebuild
// its model: the encoder's Hugging Face configuration, the longest input
// in word pieces and the vocabulary's size (its tokens are stored beside).
type ChapterConfig struct {
	Bert      Config `json:"bert"`
	SeqLen    int    `json:"seq_len"`
	VocabSize int    `json:"vocab_size"`
}

// defaultConfig is the chapters' model: 4 layers, 256 wide, 4 heads, an
// 8,000-token vocabulary learned on the training reviews, 128 pieces.
func defaultConfig() ChapterConfig {
	c := BaseConfig()
	c.HiddenSize, c.NumHiddenLayers, c.NumAttentionHeads, c.IntermediateSize = 256, 4, 4, 1024
	c.MaxPositionEmbeddings = 128
	return ChapterConfig{Bert: c, SeqLen: 128, VocabSize: 8000}
}

// vocabKey is the metadata key of the WordPiece vocabulary (its tokens in
// id order, as JSON).
const vocabKey = "plumb/wordpiece"

// flags declares the model's sizes on fs.
func (c *ChapterConfig) flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Bert.NumHiddenLayers, "layers", c.Bert.NumHiddenLayers, "encoder layers")
	fs.IntVar(&c.Bert.HiddenSize, "hidden", c.Bert.HiddenSize, "hidden size")
	fs.IntVar(&c.Bert.NumAttentionHeads, "heads", c.Bert.NumAttentionHeads, "attention heads")
	fs.IntVar(&c.Bert.IntermediateSize, "ffn", c.Bert.IntermediateSize, "feed-forward size")
	fs.IntVar(&c.SeqLen, "seq-len", c.SeqLen, "longest input in word pieces, [CLS] and [SEP] included (longer reviews are cut)")
	fs.IntVar(&c.VocabSize, "vocab-size", c.VocabSize, "WordPiece vocabulary to learn from the training reviews")
}

// prepare completes the configuration for a vocabulary of n tokens and
// checks it.
func (c *ChapterConfig) prepare(n int) error {
	c.VocabSize, c.Bert.VocabSize = n, n
	c.Bert.MaxPositionEmbeddings = max(c.Bert.MaxPositionEmbeddings, c.SeqLen)
	if c.SeqLen < 3 {
		return fmt.Errorf("bert: --seq-len %d, want at least 3 ([CLS], a piece, [SEP])", c.SeqLen)
	}
	return c.Bert.Validate()
}

// imdbReviews loads IMDB from dir, showing progress on log.
func imdbReviews(dir string, log io.Writer) (trainSet, test []imdb.Review, err error) {
	return imdb.LoadProgress(dir, data.Limits{}, data.NewProgress(log, dir, "reviews", 0))
}

// testReviews is the IMDB test reviews in dir encoded with wp, cut to
// --test-limit.
func testReviews(wp *text.WordPiece, seqLen int, dir string, o chapter.Options, log io.Writer) (*data.Dataset, error) {
	_, test, err := imdbReviews(dir, log)
	if err != nil {
		return nil, err
	}
	ds, err := reviewSet(wp, test, seqLen)
	if err != nil {
		return nil, err
	}
	return chapter.Limit(ds, "--test-limit", o.TestLimit, o.Seed, log)
}

// schedule is AdamW's learning rate: linear warm-up over the first tenth
// of the steps, then linear decay to 0 (Devlin et al. 2019, appendix A.2).
func schedule(lr float64, steps int) (*train.LR, error) {
	steps = max(steps, 1)
	decay, err := optim.LinearDecay(lr, int64(steps), 0)
	if err != nil {
		return nil, err
	}
	s, err := optim.Warmup(decay, int64(max(1, steps/10)), 0)
	if err != nil {
		return nil, err
	}
	return train.PerBatch(s), nil
}

// adamW is the chapters' optimizer: AdamW (weight decay 0.01) with the
// schedule, gradients clipped to a global norm of 1.
func adamW(params []*graph.Param, lr float64, steps int) (optim.Optimizer, *train.LR, error) {
	sched, err := schedule(lr, steps)
	if err != nil {
		return nil, nil, err
	}
	opt, err := optim.NewAdamW(params, optim.LR(lr), optim.WeightDecay(0.01), optim.GlobalClipNorm(1))
	return opt, sched, err
}

// stepsOf is the number of optimizer steps of epochs passes over n
// examples in batches of batch.
func stepsOf(n, batch, epochs int) int { return epochs * ((n + batch - 1) / max(batch, 1)) }

// encodeMeta is a chapter's checkpoint metadata: the configuration and
// the vocabulary.
func encodeMeta(name string, c ChapterConfig, tokens []string) (map[string]string, error) {
	if len(tokens) == 0 {
		return nil, fmt.Errorf("%s: no vocabulary yet (Train or Restore first)", name)
	}
	js, err := json.Marshal(tokens)
	if err != nil {
		return nil, err
	}
	return chapter.EncodeMeta(name, c, map[string]string{vocabKey: string(js)})
}

// decodeMeta reads what encodeMeta wrote for chapter name.
func decodeMeta(meta map[string]string, name string) (ChapterConfig, *text.WordPiece, []string, error) {
	var c ChapterConfig
	if err := chapter.DecodeMeta(meta, name, &c); err != nil {
		return c, nil, nil, err
	}
	var tokens []string
	if err := json.Unmarshal([]byte(meta[vocabKey]), &tokens); err != nil {
		return c, nil, nil, fmt.Errorf("%s: the checkpoint's vocabulary (%q): %w", name, vocabKey, err)
	}
	if len(tokens) != c.VocabSize || c.Bert.VocabSize != c.VocabSize {
		return c, nil, nil, fmt.Errorf("%s: a vocabulary of %d tokens for a model of %d (config %d)", name, len(tokens), c.Bert.VocabSize, c.VocabSize)
	}
	wp, err := text.NewWordPiece(tokens, text.WordPieceConfig{})
	if err != nil {
		return c, nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, wp, tokens, c.Bert.Validate()
}

// MLMChapter pretrains a MaskedLM.
type MLMChapter struct {
	Config   ChapterConfig
	MaskProb float64
	tokens   []string
	wp       *text.WordPiece
}

// mlm is the MLM chapter's model: the network, its masking and the
// masking's random source (saved with a resumable run).
type mlm struct {
	*MaskedLM
	mask MaskConfig
	rng  *rand.Rand
}

func (m mlm) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
	return maskedLoss(t, m.MaskedLM, b, m.mask, m.rng)
}

// maskConfig is the 80/10/10 rule over the vocabulary's tokens, never
// choosing the special ones.
func maskConfig(wp *text.WordPiece, prob float64) (MaskConfig, error) {
	id, ok := wp.ID("[MASK]")
	if !ok {
		return MaskConfig{}, errors.New("bert: the vocabulary has no [MASK]")
	}
	return MaskConfig{Prob: prob, MaskID: id, VocabSize: wp.Len(), Special: special(len(text.DefaultSpecial))}, nil
}

// Flags declares the model's sizes and the masking rate.
func (c *MLMChapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	c.Config.flags(fs)
	fs.Float64Var(&c.MaskProb, "mask-prob", 0.15, "share of the pieces chosen for masking (80% [MASK], 10% random, 10% kept)")
}

// Train learns the vocabulary on the training reviews, holds out 5% of
// them for the masked-token accuracy, and builds a fresh MaskedLM.
func (c *MLMChapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	reviews, _, err := imdbReviews(dir, log)
	if err != nil {
		return nil, err
	}
	wp, tokens, err := learnVocab(reviews, c.Config.VocabSize, log)
	if err != nil {
		return nil, err
	}
	c.wp, c.tokens = wp, tokens
	if err := c.Config.prepare(wp.Len()); err != nil {
		return nil, err
	}
	all, err := reviewSet(wp, reviews, c.Config.SeqLen)
	if err != nil {
		return nil, err
	}
	trainSet, held, err := all.Split(0.05, o.Seed)
	if err != nil {
		return nil, err
	}
	if trainSet, err = chapter.Limit(trainSet, "--limit", o.Limit, o.Seed, log); err != nil {
		return nil, err
	}
	if held, err = chapter.Limit(held, "--test-limit", o.TestLimit, o.Seed, log); err != nil {
		return nil, err
	}
	pcg := rand.NewPCG(o.Seed, 0x6d6c6d)
	rng := rand.New(pcg)
	m, err := NewMaskedLM(c.Config.Bert, rand.New(rand.NewPCG(o.Seed, 1)))
	if err != nil {
		return nil, err
	}
	mask, err := maskConfig(wp, c.MaskProb)
	if err != nil {
		return nil, err
	}
	loader, err := data.NewLoader(trainSet, o.Batch, data.Shuffle(o.Seed), data.BucketBy(idsField, 32))
	if err != nil {
		return nil, err
	}
	pieces := trainSet.Ragged(idsField).Values.Size()
	steps := stepsOf(trainSet.Len(), o.Batch, o.Epochs)
	return &chapter.Setup{
		Model: mlm{m, mask, rng}, RNG: pcg, Train: loader, HostFields: []string{idsField},
		Evaluate: maskedEvaluator(m, held, mask, o.Batch, o.Seed), Monitor: "masked_accuracy", Maximize: true,
		Optimizer: func() (optim.Optimizer, *train.LR, error) { return adamW(m.Params(), o.LR, steps) },
		Describe: fmt.Sprintf("pretraining BERT (%d layers, %d wide, %d heads) by masked LM on %d training reviews (%d pieces of a %d-token vocabulary, at most %d a review), %d held out (AdamW lr %g with warm-up and linear decay over %d steps, batch %d, seed %d)",
			c.Config.Bert.NumHiddenLayers, c.Config.Bert.HiddenSize, c.Config.Bert.NumAttentionHeads, trainSet.Len(), pieces, wp.Len(), c.Config.SeqLen, held.Len(), o.LR, steps, o.Batch, o.Seed),
		Record: map[string]any{"layers": c.Config.Bert.NumHiddenLayers, "hidden": c.Config.Bert.HiddenSize, "heads": c.Config.Bert.NumAttentionHeads,
			"vocab": wp.Len(), "seq_len": c.Config.SeqLen, "mask_prob": mask.Prob, "batch": o.Batch, "lr": o.LR, "seed": o.Seed,
			"optimizer": "adamw", "train_size": trainSet.Len(), "held_out": held.Len(), "train_pieces": pieces},
	}, nil
}

// maskedEvaluator measures masked-token accuracy and loss on ds with the
// same masks every time (drawn from seed), so that epochs compare; each
// batch's figures weigh by its reviews.
func maskedEvaluator(m *MaskedLM, ds *data.Dataset, mask MaskConfig, batch int, seed uint64) train.Evaluator {
	return func(report func(done, total int)) (train.Metrics, error) {
		if ds == nil || ds.Len() == 0 {
			return nil, errors.New("bert: masked-LM evaluation on no reviews")
		}
		loader, err := data.NewLoader(ds, batch)
		if err != nil {
			return nil, err
		}
		rng := rand.New(rand.NewPCG(seed, 0x6576616c))
		res, err := train.EvaluateOn(graph.DeviceOf(m.Params()), loader, func(t *graph.Tape, b *data.Batch) (train.Metrics, int, error) {
			logits, labels, err := maskedLogits(t, m, b, mask, rng)
			if err != nil {
				return nil, 0, err
			}
			res, err := train.Classification(logits, labels)
			return res, b.Len(), err
		}, report, idsField)
		if err != nil {
			return nil, err
		}
		return train.Metrics{"masked_accuracy": res["accuracy"], "loss": res["loss"]}, nil
	}
}

// Restore rebuilds the MaskedLM and its vocabulary from a checkpoint.
func (c *MLMChapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	cfg, wp, tokens, err := decodeMeta(meta, MLMSpec.Name)
	if err != nil {
		return nil, err
	}
	c.Config, c.wp, c.tokens = cfg, wp, tokens
	m, err := NewMaskedLM(cfg.Bert, rand.New(rand.NewPCG(0, 1)))
	if err != nil {
		return nil, err
	}
	mask, err := maskConfig(wp, c.MaskProb)
	return mlm{m, mask, rand.New(rand.NewPCG(0, 2))}, err
}

// Evaluate measures masked-token accuracy on the IMDB test reviews.
func (c *MLMChapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(mlm)
	if c == nil || !ok || c.wp == nil {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(MLMSpec.Name, m))
	}
	ds, err := testReviews(c.wp, c.Config.SeqLen, dir, o, log)
	if err != nil {
		return nil, "", err
	}
	return maskedEvaluator(mm.MaskedLM, ds, mm.mask, o.Batch, o.Seed), fmt.Sprintf("%d test reviews, masked-token accuracy", ds.Len()), nil
}

// maskWord is how a predict line marks a masked position.
const maskWord = "[MASK]"

// Predict prints, for each [MASK] of each line, the five likeliest pieces
// with their probabilities.
func (c *MLMChapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(mlm)
	if c == nil || !ok || c.wp == nil || out == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", MLMSpec.Name, chapter.WrongModel(MLMSpec.Name, m))
	}
	return chapter.Lines(in, func(line string) error {
		ids, rows, err := maskedLine(c.wp, line, c.Config.SeqLen, mm.mask.MaskID)
		if err != nil {
			return err
		}
		b, err := NewBatch([][]int{ids}, nil)
		if err != nil {
			return err
		}
		t := graph.NewEvalTape()
		defer t.Release()
		logits, err := mm.Logits(t, b, tensor.MustFromSlice(rows, len(rows))).Host()
		if err != nil {
			return err
		}
		vocab := logits.Shape()[1]
		probs := softmaxRows(logits.Float32s(), vocab)
		var parts []string
		for i := range rows {
			parts = append(parts, topPieces(c.wp, probs[i*vocab:(i+1)*vocab], 5))
		}
		_, err = fmt.Fprintf(out, "%s\t%s\n", line, strings.Join(parts, "\t"))
		return err
	})
}

// maskedLine encodes a line whose masked positions are written [MASK]:
// the text between them through the chapters' tokenizer, each [MASK] the
// mask id. It returns the ids and the positions of the masks.
func maskedLine(wp *text.WordPiece, line string, seqLen, maskID int) ([]int, []int64, error) {
	cls, _ := wp.ID("[CLS]")
	sep, _ := wp.ID("[SEP]")
	ids := []int{cls}
	var rows []int64
	for i, part := range strings.Split(line, maskWord) {
		if i > 0 {
			rows = append(rows, int64(len(ids)))
			ids = append(ids, maskID)
		}
		ids = append(ids, wp.IDs(strings.Join(imdb.Tokenize(part), " "))...)
	}
	ids = append(ids, sep)
	switch {
	case len(rows) == 0:
		return nil, nil, fmt.Errorf("bert-mlm: %q has no %s to fill", line, maskWord)
	case len(ids) > seqLen:
		return nil, nil, fmt.Errorf("bert-mlm: %q is %d pieces with [CLS] and [SEP], the model takes at most %d", line, len(ids), seqLen)
	}
	return ids, rows, nil
}

// softmaxRows returns the softmax of each row of n logits.
func softmaxRows(x []float32, n int) []float64 {
	out := make([]float64, len(x))
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		top := slices.Max(row)
		sum := 0.0
		for i, v := range row {
			out[r+i] = math.Exp(float64(v - top))
			sum += out[r+i]
		}
		for i := range row {
			out[r+i] /= sum
		}
	}
	return out
}

// topPieces formats the k likeliest pieces of a distribution.
func topPieces(wp *text.WordPiece, p []float64, k int) string {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	var parts []string
	for _, i := range idx[:min(k, len(idx))] {
		parts = append(parts, fmt.Sprintf("%s %.3f", wp.Token(i), p[i]))
	}
	return strings.Join(parts, ", ")
}

// Meta records the configuration and the vocabulary.
func (c *MLMChapter) Meta() (map[string]string, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	return encodeMeta(MLMSpec.Name, c.Config, c.tokens)
}

// ClassifyChapter fine-tunes a SequenceClassifier for sentiment.
type ClassifyChapter struct {
	Config ChapterConfig
	// Pretrained is a bert-mlm checkpoint whose encoder and vocabulary
	// the classifier starts from; empty trains from scratch with a
	// vocabulary learned here.
	Pretrained string
	tokens     []string
	wp         *text.WordPiece
}

type classifier struct{ *SequenceClassifier }

func (m classifier) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
	batch, err := batchOf(t, m.Bert, b)
	if err != nil {
		return t.Fail(err), 0
	}
	return graph.SoftmaxCrossEntropy(m.Logits(t, batch), b.Tensor(labelField)), b.Len()
}

// Flags declares the model's sizes and --pretrained.
func (c *ClassifyChapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	c.Config.flags(fs)
	fs.StringVar(&c.Pretrained, "pretrained", "", "a bert-mlm checkpoint to start from (its sizes and vocabulary win over the flags); none: from scratch")
}

// Train loads IMDB and builds the classifier, from a pretrained encoder
// when --pretrained names one.
func (c *ClassifyChapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	reviews, test, err := imdbReviews(dir, log)
	if err != nil {
		return nil, err
	}
	var pre map[string]*tensor.Tensor
	if c.Pretrained != "" {
		tensors, meta, err := checkpoint.Read(c.Pretrained)
		if err != nil {
			return nil, fmt.Errorf("bert-classify --pretrained: %w", err)
		}
		if c.Config, c.wp, c.tokens, err = decodeMeta(meta, MLMSpec.Name); err != nil {
			return nil, fmt.Errorf("bert-classify --pretrained %s: %w", c.Pretrained, err)
		}
		pre = tensors
	} else {
		if c.wp, c.tokens, err = learnVocab(reviews, c.Config.VocabSize, log); err != nil {
			return nil, err
		}
		if err := c.Config.prepare(c.wp.Len()); err != nil {
			return nil, err
		}
	}
	trainSet, err := reviewSet(c.wp, reviews, c.Config.SeqLen)
	if err != nil {
		return nil, err
	}
	testSet, err := reviewSet(c.wp, test, c.Config.SeqLen)
	if err != nil {
		return nil, err
	}
	if trainSet, err = chapter.Limit(trainSet, "--limit", o.Limit, o.Seed, log); err != nil {
		return nil, err
	}
	if testSet, err = chapter.Limit(testSet, "--test-limit", o.TestLimit, o.Seed, log); err != nil {
		return nil, err
	}
	m, err := NewSequenceClassifier(c.Config.Bert, rand.New(rand.NewPCG(o.Seed, 1)))
	if err != nil {
		return nil, err
	}
	from := "from scratch"
	if pre != nil {
		n, err := loadEncoder(m, pre)
		if err != nil {
			return nil, fmt.Errorf("bert-classify --pretrained %s: %w", c.Pretrained, err)
		}
		from = fmt.Sprintf("from %s (%d tensors)", c.Pretrained, n)
	}
	loader, err := data.NewLoader(trainSet, o.Batch, data.Shuffle(o.Seed), data.BucketBy(idsField, 32))
	if err != nil {
		return nil, err
	}
	steps := stepsOf(trainSet.Len(), o.Batch, o.Epochs)
	return &chapter.Setup{
		Model: classifier{m}, Train: loader, HostFields: []string{idsField},
		Evaluate: classifyEvaluator(m, testSet, o.Batch), Monitor: "accuracy", Maximize: true,
		Optimizer: func() (optim.Optimizer, *train.LR, error) { return adamW(m.Params(), o.LR, steps) },
		Describe: fmt.Sprintf("fine-tuning BERT (%d layers, %d wide) %s for sentiment on %d reviews, testing on %d (at most %d pieces a review; AdamW lr %g, %d steps, batch %d, seed %d)",
			c.Config.Bert.NumHiddenLayers, c.Config.Bert.HiddenSize, from, trainSet.Len(), testSet.Len(), c.Config.SeqLen, o.LR, steps, o.Batch, o.Seed),
		Record: map[string]any{"layers": c.Config.Bert.NumHiddenLayers, "hidden": c.Config.Bert.HiddenSize, "vocab": c.wp.Len(),
			"seq_len": c.Config.SeqLen, "pretrained": c.Pretrained, "batch": o.Batch, "lr": o.LR, "seed": o.Seed, "optimizer": "adamw",
			"train_size": trainSet.Len(), "test_size": testSet.Len()},
	}, nil
}

// loadEncoder copies a MaskedLM checkpoint's encoder (its bert.* tensors)
// into the classifier; the pooler, which BertForMaskedLM lacks, and the
// classifier keep their fresh initialisation, as transformers'
// from_pretrained leaves them. It returns the number of tensors copied.
func loadEncoder(m *SequenceClassifier, tensors map[string]*tensor.Tensor) (int, error) {
	n := 0
	for _, p := range m.Params() {
		t, ok := tensors[p.Name]
		if !ok {
			if strings.HasPrefix(p.Name, "bert.pooler.") || strings.HasPrefix(p.Name, "classifier.") {
				continue
			}
			return 0, fmt.Errorf("the checkpoint has no %s", p.Name)
		}
		if !t.Shape().Equal(p.Value.Shape()) || t.DType() != p.Value.DType() {
			return 0, fmt.Errorf("%s is %v %v in the checkpoint, the model's %v %v", p.Name, t.DType(), t.Shape(), p.Value.DType(), p.Value.Shape())
		}
		p.Value = t
		n++
	}
	return n, nil
}

// classifyEvaluator is the test accuracy and loss.
func classifyEvaluator(m *SequenceClassifier, ds *data.Dataset, batch int) train.Evaluator {
	return func(report func(done, total int)) (train.Metrics, error) {
		if ds == nil || ds.Len() == 0 {
			return nil, errors.New("bert: evaluation on no reviews")
		}
		loader, err := data.NewLoader(ds, batch)
		if err != nil {
			return nil, err
		}
		return train.EvaluateOn(graph.DeviceOf(m.Params()), loader, func(t *graph.Tape, b *data.Batch) (train.Metrics, int, error) {
			batch, err := batchOf(t, m.Bert, b)
			if err != nil {
				return nil, 0, err
			}
			res, err := train.Classification(m.Logits(t, batch), b.Tensor(labelField))
			return res, b.Len(), err
		}, report, idsField)
	}
}

// Restore rebuilds the classifier and its vocabulary from a checkpoint.
func (c *ClassifyChapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	cfg, wp, tokens, err := decodeMeta(meta, ClassifySpec.Name)
	if err != nil {
		return nil, err
	}
	c.Config, c.wp, c.tokens = cfg, wp, tokens
	m, err := NewSequenceClassifier(cfg.Bert, rand.New(rand.NewPCG(0, 1)))
	return classifier{m}, err
}

// Evaluate measures the classifier on the IMDB test reviews.
func (c *ClassifyChapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(classifier)
	if c == nil || !ok || c.wp == nil {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(ClassifySpec.Name, m))
	}
	ds, err := testReviews(c.wp, c.Config.SeqLen, dir, o, log)
	if err != nil {
		return nil, "", err
	}
	return classifyEvaluator(mm.SequenceClassifier, ds, o.Batch), fmt.Sprintf("%d test reviews", ds.Len()), nil
}

// Predict prints each review's sentiment and its probabilities.
func (c *ClassifyChapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	mm, ok := m.(classifier)
	if c == nil || !ok || c.wp == nil || out == nil {
		return fmt.Errorf("%s: Predict needs a chapter, its model and an output: %w", ClassifySpec.Name, chapter.WrongModel(ClassifySpec.Name, m))
	}
	var names []string
	var seqs [][]int
	err := chapter.Lines(in, func(line string) error {
		enc, err := c.wp.Encode(strings.Join(imdb.Tokenize(line), " "), c.Config.SeqLen)
		if err != nil {
			return err
		}
		names, seqs = append(names, chapter.Excerpt(line, 40)), append(seqs, enc.IDs)
		return nil
	})
	if err != nil {
		return err
	}
	b, err := NewBatch(seqs, nil)
	if err != nil {
		return err
	}
	t := graph.NewEvalTape()
	defer t.Release()
	logits, err := mm.Logits(t, b).Host()
	if err != nil {
		return err
	}
	labels := make([]string, 2)
	labels[imdb.Positive], labels[imdb.Negative] = "positive", "negative"
	return chapter.Classify(out, names, logits, labels, 0)
}

// Meta records the configuration and the vocabulary.
func (c *ClassifyChapter) Meta() (map[string]string, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	return encodeMeta(ClassifySpec.Name, c.Config, c.tokens)
}
