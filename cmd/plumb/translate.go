package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// stdin is what plumb translate reads; tests replace it.
var stdin io.Reader = os.Stdin

// A translation model is saved as FILE (the parameters) with
// FILE.sizes.json, FILE.src.vocab and FILE.trg.vocab beside it; those
// three are written before training, the parameters after every epoch
// that improves the BLEU.
func saveTranslatorFiles(path string, m *translate.Model, d *translate.Data) error {
	sizes, err := json.Marshal(m.Sizes())
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".sizes.json", sizes, 0o644); err != nil {
		return err
	}
	for ext, v := range map[string]*data.Vocab{".src.vocab": d.Src, ".trg.vocab": d.Trg} {
		f, err := os.Create(path + ext)
		if err != nil {
			return err
		}
		if err := v.Save(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func loadTranslator(path string) (*translate.Model, *data.Vocab, *data.Vocab, error) {
	raw, err := os.ReadFile(path + ".sizes.json")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("translate: %w (written by plumb train translate --save beside the parameters)", err)
	}
	var sizes translate.Sizes
	if err := json.Unmarshal(raw, &sizes); err != nil {
		return nil, nil, nil, fmt.Errorf("translate: %s.sizes.json: %w", path, err)
	}
	vocabs := make([]*data.Vocab, 2)
	for i, ext := range []string{".src.vocab", ".trg.vocab"} {
		f, err := os.Open(path + ext)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("translate: %w", err)
		}
		vocabs[i], err = data.LoadVocab(f, path+ext, data.Unk)
		f.Close()
		if err != nil {
			return nil, nil, nil, err
		}
	}
	if vocabs[0].Len() != sizes.Src || vocabs[1].Len() != sizes.Trg {
		return nil, nil, nil, fmt.Errorf("translate: %s: vocabularies of %d and %d words for a model of %d and %d", path, vocabs[0].Len(), vocabs[1].Len(), sizes.Src, sizes.Trg)
	}
	m, err := translate.New(sizes, tensor.NewRNG(0))
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkpoint.Load(path, m.Params(), nil); err != nil {
		return nil, nil, nil, err
	}
	return m, vocabs[0], vocabs[1], nil
}

func trainTranslate(args []string, stdout, stderr io.Writer) (err error) {
	def := translate.DefaultConfig()
	f := newChapterFlags("train translate", stderr, def.Epochs, def.Batch, def.LR, "multi30k/")
	f.saveBest("BLEU")
	f.fs.Lookup("log-every").Usage = "print the running loss every N steps (with --log, also a step record)"
	f.fs.Lookup("save").Usage = "write the model here (sizes and vocabularies beside it; the parameters after every epoch that improves the BLEU)"
	beam := f.fs.Int("beam", def.Beam, "beam width of the BLEU evaluation")
	evalLimit := f.fs.Int("eval-limit", 0, "compute BLEU on only the first N test2016 sentences (0: all 1000)")
	emb := f.fs.Int("emb", 0, "embedding width (0: the default)")
	hidden := f.fs.Int("hidden", 0, "GRU units and attention units (0: the default)")
	dropout := f.fs.Float64("dropout", translate.DefaultDropout, "dropout rate on the embeddings and the projection's input (0: none)")
	minCount := f.fs.Int("min-count", 2, "keep training words seen at least this often")
	if err := f.parse(args); err != nil {
		return err
	}
	d := data.Dir(f.dir)
	if d == "" {
		return fmt.Errorf("translate: no data directory: pass --data DIR or set PLUMB_DATA")
	}
	dat, err := translate.LoadData(d, *minCount)
	if err != nil {
		return err
	}
	dat.Train = f.limitSet(dat.Train)
	sizes := translate.DefaultSizes(dat.Src.Len(), dat.Trg.Len())
	if *emb > 0 {
		sizes.Emb = *emb
	}
	if *hidden > 0 {
		sizes.Hidden, sizes.Attention = *hidden, *hidden
	}
	sizes.Dropout = *dropout
	m, err := translate.New(sizes, tensor.NewRNG(f.seed))
	if err != nil {
		return err
	}
	closeDev, err := moveModel(f.device, m.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	fmt.Fprintf(stdout, "training on %d pairs (vocabularies %d en, %d de; emb %d, hidden %d, dropout %g; Adam lr %g, batch %d, seed %d)\n",
		dat.Train.Len(), dat.Src.Len(), dat.Trg.Len(), sizes.Emb, sizes.Hidden, sizes.Dropout, f.lr, f.batch, f.seed)
	var sum float64
	var n int
	began := time.Now()
	cfg := translate.Config{Epochs: f.epochs, Batch: f.batch, LR: f.lr, ClipNorm: def.ClipNorm, Seed: f.seed, Beam: *beam, EvalLimit: *evalLimit,
		Step: func(s train.Step) {
			sum, n = sum+s.Loss, n+1
			if s.Step%f.every == 0 {
				fmt.Fprintf(stdout, "epoch %d step %d: loss %.4f (mean of the last %d batches), %.0f target words/s, %s\n",
					s.Epoch, s.Step, sum/float64(n), n, s.SamplesPerSec, time.Since(began).Round(time.Second))
				sum, n = 0, 0
			}
		}}
	tc, err := translate.TrainConfig(m, dat, cfg)
	if err != nil {
		return err
	}
	f.epochLine = func(e train.Epoch) string {
		return fmt.Sprintf("epoch %d/%d: train loss %.4f, val loss %.4f, test2016 BLEU %.2f (beam %d) (%.0f target words/s, %s, eval %s)",
			e.Epoch, f.epochs, e.TrainLoss, e.Metrics["val_loss"], e.Metrics["bleu"], *beam, e.SamplesPerSec,
			e.Duration.Round(time.Second), e.EvalDuration.Round(time.Second))
	}
	if f.save != "" {
		if err := saveTranslatorFiles(f.save, m, dat); err != nil {
			return err
		}
	}
	_, err = runChapter(f, tc, runlog.Record{Model: f.runName("translate", def.Epochs, def.Batch), Config: map[string]any{
		"epochs": f.epochs, "batch": f.batch, "lr": f.lr, "seed": f.seed, "optimizer": "adam", "clip_norm": def.ClipNorm,
		"beam": *beam, "emb": sizes.Emb, "hidden": sizes.Hidden, "dropout": sizes.Dropout, "train_size": dat.Train.Len(),
	}}, stdout, stderr)
	return err
}

// translateLines is plumb translate: English sentences from stdin, one
// per line, German out, decoded batch by batch.
func translateLines(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := fs.String("load", "", "model written by plumb train translate --save")
	beam := fs.Int("beam", 4, "beam width")
	batch := fs.Int("batch", 64, "sentences decoded together")
	maxLen := fs.Int("max-len", 80, "most words of a translation")
	device := fs.String("device", "cpu", "where to decode: cpu, or cuda (GPU 0; needs a binary built with -tags cuda)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *load == "" {
		return fmt.Errorf("translate: --load FILE is required")
	}
	if err := checkDevice(*device); err != nil {
		return err
	}
	if *batch < 1 {
		return fmt.Errorf("translate: --batch %d must be positive", *batch)
	}
	m, src, trg, err := loadTranslator(*load)
	if err != nil {
		return err
	}
	closeDev, err := moveModel(*device, m.Params(), stderr) // stdout carries only the translations
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	cfg := decode.Config{BeamWidth: *beam, MaxLen: *maxLen, Norm: decode.Average}
	var seqs [][]int64
	flush := func() error {
		if len(seqs) == 0 {
			return nil
		}
		f := data.SeqField("src", seqs)
		out, err := m.Translate(f.Ragged, trg, cfg)
		if err != nil {
			return err
		}
		for _, ws := range out {
			fmt.Fprintln(stdout, strings.Join(ws, " "))
		}
		seqs = seqs[:0]
		return nil
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		words := append(append([]string{data.BOS}, translate.Tokenize(sc.Text())...), data.EOS)
		ids, err := src.Encode(words)
		if err != nil {
			return err
		}
		if seqs = append(seqs, ids); len(seqs) == *batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("translate: reading stdin: %w", err)
	}
	return flush()
}
