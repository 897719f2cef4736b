package srl

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/conll05"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/metrics"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/train"
)

// Data is CoNLL-05 test.wsj (the set the book trains on) cut into a
// training part and a held-out part, with the dictionaries.
type Data struct {
	Words, Verbs, Labels *data.Vocab
	Train, HeldOut       *data.Dataset
}

// LoadData reads test.wsj and Paddle's verb and label dictionaries from
// dir (conll05.Load, conll05.LoadDicts), builds the word dictionary
// from the set's words ("bos" and "eos", the context words past a
// sentence's ends, first; then every word by frequency; "<unk>" last),
// since Paddle's wordDict.txt is not in the data we hold, and holds out
// heldOut of the propositions, drawn with seed (data.Dataset.Split).
func LoadData(dir string, heldOut float64, seed uint64) (*Data, error) {
	exs, err := conll05.Load(dir, "test.wsj")
	if err != nil {
		return nil, err
	}
	_, verbs, labels, err := conll05.LoadDicts(dir)
	if err != nil {
		return nil, err
	}
	counts := data.Counter{}
	for _, ex := range exs {
		counts.Add(ex.Words...)
	}
	words, err := data.BuildVocab(&counts, data.VocabConfig{Specials: []string{"bos", "eos"}, Unk: data.Unk})
	if err != nil {
		return nil, err
	}
	ds, err := conll05.Dataset(exs, words, verbs, labels)
	if err != nil {
		return nil, err
	}
	d := &Data{Words: words, Verbs: verbs, Labels: labels}
	if d.Train, d.HeldOut, err = ds.Split(heldOut, seed); err != nil {
		return nil, err
	}
	return d, nil
}

// Sizes returns the book's sizes for d's dictionaries; zero sizes, which
// New refuses, for a nil d or one missing a dictionary.
func (d *Data) Sizes() Sizes {
	if d == nil || d.Words == nil || d.Verbs == nil || d.Labels == nil {
		return Sizes{}
	}
	return Book(d.Words.Len(), d.Verbs.Len(), d.Labels.Len())
}

// Config is a training run's recipe. Book gives the book's.
type Config struct {
	Epochs, Batch int
	LR            float64 // SGD's rate, halved every 100,000 steps as the book's exponential_decay
	CRFLR         float64 // the factor on the CRF's rate (the book's mix_hidden_lr)
	Seed          uint64
	// Log, if set, receives a line every LogEvery steps with the running
	// mean cost per sequence.
	Log      io.Writer
	LogEvery int
	Progress func(train.Progress)
	// Epoch, if set, is told each finished epoch.
	Epoch func(train.Epoch)
	// BestPath, if set, receives the parameters after every epoch that
	// improves the held-out F1 (train.Config.BestPath), so a run stopped
	// early still leaves its best epoch.
	BestPath string
}

// BookConfig is the book's recipe: SGD at 0.01 with the CRF at 1e-3 of
// it, batch 10.
func BookConfig() Config {
	return Config{Epochs: 1, Batch: 10, LR: 0.01, CRFLR: 1e-3, Seed: 1, LogEvery: 100}
}

// Optimizer is the book's SGD over m's parameters: lr halved every
// 100,000 steps (staircase), the CRF's transitions, start and stop at
// crfFactor times that.
func Optimizer(m *Model, lr, crfFactor float64) (optim.Optimizer, *train.LR, error) {
	if !m.built() {
		return nil, nil, errNotBuilt("Optimizer")
	}
	decay, err := optim.ExponentialDecay(lr, 100000, 0.5, true)
	if err != nil {
		return nil, nil, err
	}
	sched := train.PerBatch(decay)
	factors := map[string]float64{}
	for _, p := range m.CRF.Params() {
		factors[p.Name] = crfFactor
	}
	opt, err := optim.NewSGD(m.Params(), optim.LRSchedule(sched), optim.ParamLR(factors))
	return opt, sched, err
}

// Train trains m on d.Train with cfg, evaluating chunk precision, recall
// and F1 on d.HeldOut after each epoch.
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
		return none, fmt.Errorf("srl: train: epochs=%d batch=%d must be positive", cfg.Epochs, cfg.Batch)
	}
	if d == nil {
		return none, errors.New("srl: train: nil data (load it with LoadData)")
	}
	loader, err := data.NewLoader(d.Train, cfg.Batch, data.Shuffle(cfg.Seed), data.BalanceBy("word"))
	if err != nil {
		return none, err
	}
	opt, sched, err := Optimizer(m, cfg.LR, cfg.CRFLR)
	if err != nil {
		return none, err
	}
	tc := train.Config[*data.Batch]{
		Params: m.Params(), Optimizer: opt, Train: loader, Loss: m.Loss, Epochs: cfg.Epochs, LR: sched, Device: graph.DeviceOf(m.Params()),
		Monitor: "f1", Maximize: true, Progress: cfg.Progress, BestPath: cfg.BestPath,
		Evaluate: func(report func(done, total int)) (train.Metrics, error) {
			r, err := Evaluate(m, d, d.HeldOut, 20, report)
			if err != nil {
				return nil, err
			}
			return train.Metrics{"precision": r.Precision, "recall": r.Recall, "f1": r.F1, "loss": r.Loss}, nil
		},
	}
	if cfg.Log != nil && cfg.LogEvery > 0 {
		var sum float64
		var n int
		began := time.Now()
		tc.Hooks = append(tc.Hooks, train.Hooks{Step: func(s train.Step) error {
			sum += s.Loss
			n++
			if s.Step%cfg.LogEvery == 0 {
				fmt.Fprintf(cfg.Log, "epoch %d step %d: cost %.4f (mean of the last %d batches), %.1f sequences/s, %s\n",
					s.Epoch, s.Step, sum/float64(n), n, s.SamplesPerSec, time.Since(began).Round(time.Second))
				sum, n = 0, 0
			}
			return nil
		}})
	}
	if cfg.Epoch != nil {
		tc.Hooks = append(tc.Hooks, train.Hooks{Epoch: func(e train.Epoch) error { cfg.Epoch(e); return nil }})
	}
	return tc, nil
}

// Result is an evaluation: chunk precision, recall and F1 (IOB, the verb
// chunk excluded, Paddle's chunk_eval) and the mean CRF cost per
// sequence.
type Result struct {
	metrics.PRF
	Loss      float64
	Sequences int
}

// Evaluate decodes ds with m in batches of batch and scores the paths
// against its labels. report, if set, is told the progress.
func Evaluate(m *Model, d *Data, ds *data.Dataset, batch int, report func(done, total int)) (Result, error) {
	if !m.built() {
		return Result{}, errNotBuilt("evaluate")
	}
	if d == nil || d.Labels == nil {
		return Result{}, errors.New("srl: evaluate: no label dictionary (d or d.Labels is nil)")
	}
	types := (d.Labels.Len() - 1) / 2
	verb := d.Labels.ID("B-V")
	if verb < 0 || d.Labels.Len()%2 != 1 {
		return Result{}, fmt.Errorf("srl: evaluate: the label dictionary (%d tags) is not IOB pairs plus O with B-V", d.Labels.Len())
	}
	ev, err := metrics.NewChunkEval(metrics.IOB, types, verb/2)
	if err != nil {
		return Result{}, err
	}
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return Result{}, err
	}
	var res Result
	tape := graph.NewEvalTape()
	dev := graph.DeviceOf(m.Params())
	for hb, err := range loader.Batches(1) {
		if err != nil {
			return Result{}, err
		}
		labels := hb.Ragged("label") // the gold tags, read on the host
		if labels == nil {
			return Result{}, fmt.Errorf("srl: evaluate: the batch has no ragged field \"label\" (fields %v)", hb.Names())
		}
		b, err := train.MoveBatch(tape, dev, hb)
		if err != nil {
			return Result{}, fmt.Errorf("srl: evaluate: %w", err)
		}
		em := m.Emissions(tape, b)
		tags := b.Ragged("label").Values
		nll, err := m.CRF.NegLogLikelihood(em, tags).Host()
		if err != nil {
			return Result{}, err
		}
		paths, _, err := m.CRF.Decode(em)
		if err != nil {
			return Result{}, err
		}
		gold, err := labels.Values.Ints()
		if err != nil {
			return Result{}, err
		}
		for q, p := range paths {
			res.Loss += nll.At(q)
			if err := ev.Add(p, gold[labels.Offsets[q]:labels.Offsets[q+1]]); err != nil {
				return Result{}, err
			}
		}
		res.Sequences += len(paths)
		tape.Release()
		if report != nil {
			report(res.Sequences, ds.Len())
		}
	}
	if res.Sequences > 0 {
		res.Loss /= float64(res.Sequences)
	}
	res.PRF = ev.PRF()
	return res, nil
}
