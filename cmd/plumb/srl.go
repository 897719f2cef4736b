package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/srl"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// srlFlags are the flags train srl and eval srl share: where the data is
// and which part of it is held out.
type srlFlags struct {
	dir     *string
	heldOut *float64
	seed    *uint64
}

func addSRLFlags(fs *flag.FlagSet) srlFlags {
	return srlFlags{
		dir:     fs.String("data", "", "directory holding conll05/ (CoNLL-05 test.wsj and Paddle's dictionaries; default $PLUMB_DATA)"),
		heldOut: fs.Float64("heldout", 0.1, "fraction of the propositions held out for evaluation"),
		seed:    fs.Uint64("seed", 1, "seed for the held-out split, initialisation and shuffling"),
	}
}

func (f srlFlags) load() (*srl.Data, error) {
	dir := data.Dir(*f.dir)
	if dir == "" {
		return nil, fmt.Errorf("srl: no data directory: pass --data DIR or set PLUMB_DATA")
	}
	return srl.LoadData(dir, *f.heldOut, *f.seed)
}

func trainSRL(args []string, stdout, stderr io.Writer) (err error) {
	book := srl.BookConfig()
	f := newChapterFlags("train srl", stderr, book.Epochs, book.Batch, book.LR, "conll05/ (CoNLL-05 test.wsj and Paddle's dictionaries)")
	f.saveBest("held-out F1")
	f.fs.Lookup("log-every").Usage = "print the running cost every N steps (with --log, also a step record)"
	crfLR := f.fs.Float64("crf-lr", book.CRFLR, "factor on the learning rate of the CRF's parameters")
	sf := srlFlags{dir: &f.dir, seed: &f.seed,
		heldOut: f.fs.Float64("heldout", 0.1, "fraction of the propositions held out for evaluation")}
	if err := f.parse(args); err != nil {
		return err
	}
	d, err := sf.load()
	if err != nil {
		return err
	}
	d.Train = f.limitSet(d.Train)
	m, err := srl.New(d.Sizes(), tensor.NewRNG(f.seed))
	if err != nil {
		return err
	}
	closeDev, err := moveModel(f.device, m.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	fmt.Fprintf(stdout, "training db_lstm on %d propositions, holding out %d (%d words, %d verbs, %d tags; SGD lr %g, CRF x%g, batch %d, seed %d)\n",
		d.Train.Len(), d.HeldOut.Len(), d.Words.Len(), d.Verbs.Len(), d.Labels.Len(), f.lr, *crfLR, f.batch, f.seed)
	cfg, err := srl.TrainConfig(m, d, srl.Config{Epochs: f.epochs, Batch: f.batch, LR: f.lr, CRFLR: *crfLR, Seed: f.seed,
		Log: stdout, LogEvery: f.every})
	if err != nil {
		return err
	}
	f.epochLine = func(e train.Epoch) string {
		return fmt.Sprintf("epoch %d/%d: train cost %.4f, held-out cost %.4f, chunk precision %.4f recall %.4f F1 %.4f (%.1f sequences/s, %s)",
			e.Epoch, f.epochs, e.TrainLoss, e.Metrics["loss"], e.Metrics["precision"], e.Metrics["recall"], e.Metrics["f1"],
			e.SamplesPerSec, e.Duration.Round(time.Second))
	}
	_, err = runChapter(f, cfg, runlog.Record{Model: f.runName("srl", book.Epochs, book.Batch), Config: map[string]any{
		"epochs": f.epochs, "batch": f.batch, "lr": f.lr, "crf_lr": *crfLR, "seed": f.seed, "optimizer": "sgd",
		"train_size": d.Train.Len(), "heldout_size": d.HeldOut.Len(),
	}}, stdout, stderr)
	return err
}

func evalSRL(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("eval srl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := fs.String("load", "", "parameters written by plumb train srl --save")
	device := fs.String("device", "cpu", "where to evaluate: cpu, or cuda (GPU 0; needs a binary built with -tags cuda)")
	sf := addSRLFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *load == "" {
		return fmt.Errorf("eval srl: --load FILE is required")
	}
	if err := checkDevice(*device); err != nil {
		return err
	}
	d, err := sf.load()
	if err != nil {
		return err
	}
	m, err := srl.New(d.Sizes(), tensor.NewRNG(0))
	if err != nil {
		return err
	}
	if err := checkpoint.Load(*load, m.Params(), nil); err != nil {
		return err
	}
	closeDev, err := moveModel(*device, m.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	r, err := srl.Evaluate(m, d, d.HeldOut, 100, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "db_lstm from %s on %d held-out propositions: cost %.4f, chunk precision %.4f recall %.4f F1 %.4f\n",
		*load, r.Sequences, r.Loss, r.Precision, r.Recall, r.F1)
	return nil
}
