package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	trainpkg "github.com/plumbml/plumb/train"
)

// trainSentiment is plumb train sentiment [--model cnn|lstm]: the book's
// IMDB classifiers, evaluated on the 25,000 test reviews after each pass.
func trainSentiment(args []string, stdout, stderr io.Writer) (err error) {
	f := newChapterFlags("train sentiment", stderr, 1, sentiment.Batch, sentiment.LR, "IMDB (aclImdb, or its .tar.gz)")
	model := f.fs.String("model", "cnn", "network: cnn (text CNN) or lstm (stacked LSTM)")
	testLimit := f.fs.Int("test-limit", 0, "evaluate on only the first N test reviews of each label (0: all)")
	if err := f.parse(args); err != nil {
		return err
	}
	if *model != "cnn" && *model != "lstm" {
		return fmt.Errorf("train sentiment: --model %q, want cnn or lstm", *model)
	}
	dir, err := dataDir(f.dir, "imdb")
	if err != nil {
		return fmt.Errorf("train sentiment: %w", err)
	}
	d, err := sentiment.Load(dir)
	if err != nil {
		return err
	}
	m, err := sentiment.New(*model, d.Vocab.Len(), tensor.NewRNG(f.seed))
	if err != nil {
		return err
	}
	closeDev, err := moveModel(f.device, m.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	opt, err := sentiment.NewOptimizer(m, f.lr)
	if err != nil {
		return err
	}
	// --limit and --test-limit take reviews from the shuffled order, so a
	// short run still sees both labels.
	trainSet, err := shuffledTake(d.Train, f.limit, f.seed)
	if err != nil {
		return err
	}
	testSet, err := shuffledTake(d.Test, *testLimit, f.seed)
	if err != nil {
		return err
	}
	loader, err := data.NewLoader(trainSet, f.batch, data.Shuffle(f.seed), data.BalanceBy("words"))
	if err != nil {
		return err
	}
	words := trainSet.Ragged("words").Values.Size()
	fmt.Fprintf(stdout, "training sentiment %s on %d reviews (%d words), dictionary %d words, testing on %d (Adagrad lr %g, batch %d, seed %d)\n",
		*model, trainSet.Len(), words, d.Vocab.Len(), testSet.Len(), f.lr, f.batch, f.seed)
	res, err := runChapter(f, trainpkg.Config[*data.Batch]{
		Params: m.Params(), Optimizer: opt, Train: loader, Loss: sentiment.Loss(m),
		Evaluate: sentiment.Evaluator(m, testSet, f.batch), Monitor: "accuracy", Maximize: true,
	}, runlog.Record{Model: f.runName("sentiment-"+*model, 1, sentiment.Batch), Config: map[string]any{
		"model": *model, "epochs": f.epochs, "batch": f.batch, "lr": f.lr, "seed": f.seed, "optimizer": "adagrad",
		"train_size": trainSet.Len(), "test_size": testSet.Len(), "vocab": d.Vocab.Len(), "train_words": words,
	}}, stdout, stderr)
	for _, e := range res.Epochs {
		fmt.Fprintf(stdout, "epoch %d: %.0f words/s\n", e.Epoch, e.SamplesPerSec*float64(words)/float64(trainSet.Len()))
	}
	return err
}

// shuffledTake returns n examples of ds in a seeded random order (all of
// them when n is 0 or at least ds.Len()).
func shuffledTake(ds *data.Dataset, n int, seed uint64) (*data.Dataset, error) {
	if n <= 0 || n >= ds.Len() {
		return ds, nil
	}
	perm := tensor.NewRNG(seed).Perm(ds.Len())
	return ds.Subset(perm[:n])
}
