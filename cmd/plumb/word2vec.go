package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/word2vec"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	trainpkg "github.com/plumbml/plumb/train"
)

// trainWord2Vec is plumb train word2vec: the book's N-gram model on PTB,
// evaluated after each pass on PTB's valid and test files.
func trainWord2Vec(args []string, stdout, stderr io.Writer) (err error) {
	f := newChapterFlags("train word2vec", stderr, 3, word2vec.Batch, word2vec.LR, "PTB (ptb.{train,valid,test}.txt[.gz])")
	if err := f.parse(args); err != nil {
		return err
	}
	dir, err := dataDir(f.dir, "ptb")
	if err != nil {
		return fmt.Errorf("train word2vec: %w", err)
	}
	d, err := word2vec.Load(dir)
	if err != nil {
		return err
	}
	m, err := word2vec.New(d.Vocab.Len(), tensor.NewRNG(f.seed))
	if err != nil {
		return err
	}
	closeDev, err := moveModel(f.device, m.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	opt, err := word2vec.NewOptimizer(m, f.lr)
	if err != nil {
		return err
	}
	trainSet := f.limitSet(d.Train)
	loader, err := data.NewLoader(trainSet, f.batch, data.Shuffle(f.seed))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "training word2vec on %d 5-grams of PTB train, dictionary %d words, testing on %d (valid) and %d (test) (Adagrad lr %g, L2 %g, batch %d, seed %d)\n",
		trainSet.Len(), d.Vocab.Len(), d.Valid.Len(), d.Test.Len(), f.lr, word2vec.L2, f.batch, f.seed)
	_, err = runChapter(f, trainpkg.Config[*data.Batch]{
		Params: m.Params(), Optimizer: opt, Train: loader, Loss: m.BatchLoss,
		Evaluate: m.Evaluator(1000, word2vec.Split{Name: "valid", Set: d.Valid}, word2vec.Split{Name: "test", Set: d.Test}),
		Monitor:  "test_cost",
	}, runlog.Record{Model: f.runName("word2vec", 3, word2vec.Batch), Config: map[string]any{
		"epochs": f.epochs, "batch": f.batch, "lr": f.lr, "l2": word2vec.L2, "seed": f.seed, "optimizer": "adagrad",
		"train_size": trainSet.Len(), "test_size": d.Test.Len(), "vocab": d.Vocab.Len(),
	}}, stdout, stderr)
	return err
}

// word2vecCommand is plumb word2vec similar WORD --load FILE: the words
// whose trained embeddings have the largest dot product with WORD's.
func word2vecCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "similar" {
		return fmt.Errorf("word2vec: want plumb word2vec similar WORD --load FILE [--k N] [--data DIR]")
	}
	args = args[1:]
	var word string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		word, args = args[0], args[1:]
	}
	f := newChapterFlags("word2vec similar", stderr, 1, 1, 1, "PTB, to rebuild the dictionary")
	k := f.fs.Int("k", 10, "how many neighbours")
	if err := parseFlags(f.fs, args); err != nil {
		return err
	}
	switch {
	case word == "":
		return fmt.Errorf("word2vec similar: no WORD given")
	case f.device != "cpu":
		return fmt.Errorf("word2vec similar: --device %s: the query runs on the CPU", f.device)
	case f.load == "":
		return fmt.Errorf("word2vec similar: %w", errNoLoad)
	}
	dir, err := dataDir(f.dir, "ptb")
	if err != nil {
		return fmt.Errorf("word2vec similar: %w", err)
	}
	d, err := word2vec.Load(dir)
	if err != nil {
		return err
	}
	id := d.Vocab.ID(word)
	if id == d.Vocab.UnkID() && word != data.Unk {
		return fmt.Errorf("word2vec similar: %q is not in the dictionary of %d words (seen more than 50 times in PTB train and valid)", word, d.Vocab.Len())
	}
	m, err := word2vec.New(d.Vocab.Len(), tensor.NewRNG(0))
	if err != nil {
		return err
	}
	if err := checkpoint.Load(f.load, m.Params(), nil); err != nil {
		return err
	}
	near, err := m.Similar(id, *k)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "words nearest to %q (dot product of embeddings):\n", word)
	for _, n := range near {
		fmt.Fprintf(stdout, "  %-15s %8.4f\n", d.Vocab.Word(n.ID), n.Score)
	}
	return nil
}
