package translate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/parallel"
	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/metrics"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Tokenize splits a sentence for the model: lower-cased, then split as
// sacreBLEU's 13a tokeniser splits (metrics.Tokenize13a), so the words
// the model emits, joined by spaces, are what BLEU counts.
func Tokenize(line string) []string {
	return strings.Fields(strings.ToLower(metrics.Tokenize13a(line)))
}

// Data is Multi30k task 1, English to German: the training pairs, the
// validation set and test2016 (flickr), with dictionaries built from the
// training pairs.
type Data struct {
	Src, Trg        *data.Vocab
	Train, Val      *data.Dataset
	Test            *data.Dataset
	TestRefs        []string // test2016's German sentences, tokenised and joined by spaces
	TestSrc         []string // and the English ones
	trainPairs, val []parallel.Pair
}

// multi30kDir finds the folder of the Multi30k files under dir.
func multi30kDir(dir string) (string, error) {
	for _, d := range []string{filepath.Join(dir, "multi30k"), dir} {
		if _, err := os.Stat(filepath.Join(d, "train.en.gz")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("translate: no Multi30k (train.en.gz) in %s or %s/multi30k", dir, dir)
}

// LoadData reads Multi30k from dir (or dir/multi30k): train, val and
// test_2016_flickr, English and German (raw or gzip), tokenised by
// Tokenize, with dictionaries of the training words seen at least
// minCount times (parallel.Vocab: <s>, <e>, <unk> first).
func LoadData(dir string, minCount int) (*Data, error) {
	dir, err := multi30kDir(dir)
	if err != nil {
		return nil, err
	}
	load := func(split string) ([]parallel.Pair, error) {
		return parallel.Load(filepath.Join(dir, split+".en.gz"), filepath.Join(dir, split+".de.gz"), Tokenize)
	}
	d := &Data{}
	if d.trainPairs, err = load("train"); err != nil {
		return nil, err
	}
	if d.val, err = load("val"); err != nil {
		return nil, err
	}
	test, err := load("test_2016_flickr")
	if err != nil {
		return nil, err
	}
	if d.Src, err = parallel.Vocab(d.trainPairs, false, 0, minCount); err != nil {
		return nil, err
	}
	if d.Trg, err = parallel.Vocab(d.trainPairs, true, 0, minCount); err != nil {
		return nil, err
	}
	for _, p := range test {
		d.TestRefs = append(d.TestRefs, strings.Join(p.Trg, " "))
		d.TestSrc = append(d.TestSrc, strings.Join(p.Src, " "))
	}
	if d.Train, err = parallel.Dataset(d.trainPairs, d.Src, d.Trg, 0); err != nil {
		return nil, err
	}
	if d.Val, err = parallel.Dataset(d.val, d.Src, d.Trg, 0); err != nil {
		return nil, err
	}
	if d.Test, err = parallel.Dataset(test, d.Src, d.Trg, 0); err != nil {
		return nil, err
	}
	return d, nil
}

// Config is a training run.
type Config struct {
	Epochs, Batch int
	LR, ClipNorm  float64 // Adam's rate; global-norm clipping (0: none)
	Seed          uint64
	Beam          int // beam width of the BLEU evaluation after each epoch
	EvalLimit     int // evaluate BLEU on this many test2016 sentences (0: all)
	Progress      func(train.Progress)
	Epoch         func(train.Epoch)
	Step          func(train.Step)
	// BestPath, if set, receives the parameters after every epoch that
	// improves the BLEU (train.Config.BestPath).
	BestPath string
}

// DefaultConfig is Adam 1e-3 with gradients clipped to norm 5, batch 64,
// beam 4.
func DefaultConfig() Config {
	return Config{Epochs: 1, Batch: 64, LR: 1e-3, ClipNorm: 5, Seed: 1, Beam: 4}
}

// HostFields are the batch fields Loss reads on the host (the targets,
// which it orders by length); the trainer moves the others to the model's
// device (train.Config.HostFields).
var HostFields = []string{"trg", "trg_next"}

// BatchLoss is Model.Loss over a batch of parallel.Dataset's fields.
func (m *Model) BatchLoss(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
	return m.Loss(t, b.Ragged("src"), b.Ragged("trg"), b.Ragged("trg_next"))
}

// Train trains m on d.Train, batches bucketed by source length, and
// evaluates the validation loss and BLEU on test2016 after each epoch.
// The trainer counts target words as its examples, so its rates are
// target words per second.
func Train(m *Model, d *Data, cfg Config) (train.Result, error) {
	tc, err := TrainConfig(m, d, cfg)
	if err != nil {
		return train.Result{}, err
	}
	return train.Run(tc)
}

// TrainConfig is what Train runs: the trainer's configuration for m on d
// with cfg, for a caller that adds its own hooks (a run log, a checkpoint
// to resume from) before train.Run.
func TrainConfig(m *Model, d *Data, cfg Config) (train.Config[*data.Batch], error) {
	var none train.Config[*data.Batch]
	if cfg.Epochs <= 0 || cfg.Batch <= 0 {
		return none, fmt.Errorf("translate: train: epochs=%d batch=%d must be positive", cfg.Epochs, cfg.Batch)
	}
	if !m.built() {
		return none, errNotBuilt("train")
	}
	if d == nil {
		return none, errors.New("translate: train: nil data (load it with LoadData)")
	}
	loader, err := data.NewLoader(d.Train, cfg.Batch, data.Shuffle(cfg.Seed), data.BucketBy("src", 50))
	if err != nil {
		return none, err
	}
	opts := []optim.Option{optim.LR(cfg.LR)}
	if cfg.ClipNorm > 0 {
		opts = append(opts, optim.GlobalClipNorm(cfg.ClipNorm))
	}
	opt, err := optim.NewAdam(m.Params(), opts...)
	if err != nil {
		return none, err
	}
	tc := train.Config[*data.Batch]{
		Params: m.Params(), Optimizer: opt, Train: words{loader, d.Train}, Loss: m.BatchLoss, Epochs: cfg.Epochs,
		Device: graph.DeviceOf(m.Params()), HostFields: HostFields,
		Monitor: "bleu", Maximize: true, Progress: cfg.Progress, BestPath: cfg.BestPath,
		Evaluate: func(report func(done, total int)) (train.Metrics, error) {
			loss, err := m.MeanLoss(d.Val, 100)
			if err != nil {
				return nil, err
			}
			refs := d.TestRefs
			if cfg.EvalLimit > 0 && cfg.EvalLimit < len(refs) {
				refs = refs[:cfg.EvalLimit]
			}
			bleu, err := m.BLEU(d.Test.Take(len(refs)), refs, d.Trg, decode.Config{BeamWidth: cfg.Beam, MaxLen: 50, Norm: decode.Average}, 64)
			if err != nil {
				return nil, err
			}
			return train.Metrics{"val_loss": loss, "bleu": bleu.Score}, nil
		},
	}
	if cfg.Step != nil {
		tc.Hooks = append(tc.Hooks, train.Hooks{Step: func(s train.Step) error { cfg.Step(s); return nil }})
	}
	if cfg.Epoch != nil {
		tc.Hooks = append(tc.Hooks, train.Hooks{Epoch: func(e train.Epoch) error { cfg.Epoch(e); return nil }})
	}
	return tc, nil
}

// words is the loader seen with target words as its length, so the
// trainer's progress counts words (its Loss returns words per batch).
type words struct {
	*data.Loader
	ds *data.Dataset
}

func (w words) Len() int {
	r := w.ds.Ragged("trg_next")
	if r == nil {
		return 0
	}
	return r.Values.Dim(0) * w.Loader.Len() / max(w.ds.Len(), 1)
}

// MeanLoss returns the mean cross-entropy per target word over ds
// (train.MeanLoss: each batch's mean weighed by its target words).
func (m *Model) MeanLoss(ds *data.Dataset, batch int) (float64, error) {
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return 0, err
	}
	return train.MeanLossOn(graph.DeviceOf(m.Params()), loader, m.BatchLoss, nil, HostFields...)
}

// Translate decodes each source of the ragged batch src (ids with <s> and
// <e>, as parallel.Dataset's "src") by beam search over all of them
// at once (decode.BeamSearchBatch) and returns each one's best
// hypothesis's words, without <e>. cfg's Start and End are set from trg.
func (m *Model) Translate(src *tensor.Ragged, trg *data.Vocab, cfg decode.Config) ([][]string, error) {
	switch {
	case !m.built():
		return nil, errNotBuilt("translate")
	case src == nil:
		return nil, errors.New("translate: translate: nil source batch")
	case trg == nil:
		return nil, errors.New("translate: translate: nil target vocabulary")
	}
	cfg.Start, cfg.End = trg.ID(data.BOS), trg.ID(data.EOS)
	tape := graph.NewEvalTape()
	defer tape.Release()
	ids, err := m.onDevice(tape, src.Values)
	if err != nil {
		return nil, fmt.Errorf("translate: translate: %w", err)
	}
	start := m.Encode(tape, &tensor.Ragged{Values: ids, Offsets: src.Offsets})
	if err := start.H.Err(); err != nil {
		return nil, err
	}
	// Each step ends the previous steps' values but the state it starts
	// from, so the tape holds one step's logits, not every step's.
	mark := tape.Mark()
	step := func(prev []int, s State) (*tensor.Tensor, State, error) {
		if err := tape.ReleaseSince(mark, s.H, s.Mem.Keys, s.Mem.Values); err != nil {
			return nil, s, err
		}
		ids := make([]int64, len(prev))
		for i, p := range prev {
			ids[i] = int64(p)
		}
		next := m.Step(tape, tensor.MustFromSlice(ids, len(ids)), s)
		lp, err := m.LogProbs(tape, next).Host() // beam search reads them on the host
		return lp, next, err
	}
	reorder := func(s State, parents []int) (State, error) {
		r := s.Select(parents)
		return r, r.H.Err()
	}
	hyps, err := decode.BeamSearchBatch(step, reorder, start, src.BatchSize(), cfg)
	if err != nil {
		return nil, err
	}
	out := make([][]string, len(hyps))
	for i, h := range hyps {
		toks := h[0].Tokens
		if h[0].Finished {
			toks = toks[:len(toks)-1]
		}
		ids := make([]int64, len(toks))
		for j, t := range toks {
			ids[j] = int64(t)
		}
		if out[i], err = trg.Decode(ids); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// BLEU translates ds's sources in batches of batch and scores them
// against refs (one reference per sentence) with corpus BLEU-4
// (metrics.BLEU).
func (m *Model) BLEU(ds *data.Dataset, refs []string, trg *data.Vocab, cfg decode.Config, batch int) (metrics.BLEUScore, error) {
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return metrics.BLEUScore{}, err
	}
	var hyps []string
	for b, err := range loader.Batches(1) {
		if err != nil {
			return metrics.BLEUScore{}, err
		}
		out, err := m.Translate(b.Ragged("src"), trg, cfg)
		if err != nil {
			return metrics.BLEUScore{}, err
		}
		for _, ws := range out {
			hyps = append(hyps, strings.Join(ws, " "))
		}
	}
	rs := make([][]string, len(refs))
	for i, r := range refs {
		rs[i] = []string{r}
	}
	return metrics.BLEU(hyps, rs)
}
