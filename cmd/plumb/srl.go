package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/srl"
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

func trainSRL(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train srl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	book := srl.BookConfig()
	epochs := fs.Int("epochs", book.Epochs, "passes over the training part")
	batch := fs.Int("batch", book.Batch, "batch size (sequences)")
	lr := fs.Float64("lr", book.LR, "SGD learning rate")
	crfLR := fs.Float64("crf-lr", book.CRFLR, "factor on the learning rate of the CRF's parameters")
	save := fs.String("save", "", "write the parameters (safetensors) here after every epoch that improves the held-out F1")
	limit := fs.Int("limit", 0, "train on only the first N propositions of the training part (0: all)")
	every := fs.Int("log-every", book.LogEvery, "print the running cost every N batches")
	sf := addSRLFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("train srl: unexpected arguments %q", fs.Args())
	}
	d, err := sf.load()
	if err != nil {
		return err
	}
	if *limit > 0 {
		d.Train = d.Train.Take(*limit)
	}
	m, err := srl.New(d.Sizes(), tensor.NewRNG(*sf.seed))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "training db_lstm on %d propositions, holding out %d (%d words, %d verbs, %d tags; SGD lr %g, CRF x%g, batch %d, seed %d)\n",
		d.Train.Len(), d.HeldOut.Len(), d.Words.Len(), d.Verbs.Len(), d.Labels.Len(), *lr, *crfLR, *batch, *sf.seed)
	bar := train.NewBar(stderr)
	cfg := srl.Config{Epochs: *epochs, Batch: *batch, LR: *lr, CRFLR: *crfLR, Seed: *sf.seed, Log: stdout, LogEvery: *every, Progress: bar.Update, BestPath: *save}
	cfg.Epoch = func(e train.Epoch) {
		bar.Clear()
		fmt.Fprintf(stdout, "epoch %d/%d: train cost %.4f, held-out cost %.4f, chunk precision %.4f recall %.4f F1 %.4f (%.1f sequences/s, %s)\n",
			e.Epoch, *epochs, e.TrainLoss, e.Metrics["loss"], e.Metrics["precision"], e.Metrics["recall"], e.Metrics["f1"],
			e.SamplesPerSec, e.Duration.Round(time.Second))
		if e.Best && *save != "" {
			fmt.Fprintf(stdout, "saved %s (best held-out F1 so far)\n", *save)
		}
	}
	bar.Clear()
	_, err = srl.Train(m, d, cfg)
	return err
}

func evalSRL(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval srl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	load := fs.String("load", "", "parameters written by plumb train srl --save")
	sf := addSRLFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *load == "" {
		return fmt.Errorf("eval srl: --load FILE is required")
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
	r, err := srl.Evaluate(m, d, d.HeldOut, 100, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "db_lstm from %s on %d held-out propositions: cost %.4f, chunk precision %.4f recall %.4f F1 %.4f\n",
		*load, r.Sequences, r.Loss, r.Precision, r.Recall, r.F1)
	return nil
}
