package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/recommender"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	trainpkg "github.com/plumbml/plumb/train"
)

// trainRecommender is plumb train recommender: the book's two-tower model
// on MovieLens (1M if present, else 100K), tested on a fixed 10% of the
// ratings after each pass.
func trainRecommender(args []string, stdout, stderr io.Writer) (err error) {
	f := newChapterFlags("train recommender", stderr, 5, recommender.Batch, recommender.LR, "MovieLens (ml-1m or ml-100k, folder or archive)")
	if err := f.parse(args); err != nil {
		return err
	}
	dir, err := dataDir(f.dir, "movielens")
	if err != nil {
		return fmt.Errorf("train recommender: %w", err)
	}
	d, err := recommender.Load(dir)
	if err != nil {
		return err
	}
	m, err := recommender.New(d.Sizes, tensor.NewRNG(f.seed))
	if err != nil {
		return err
	}
	closeDev, err := moveModel(f.device, m.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	opt, err := recommender.NewOptimizer(m, f.lr)
	if err != nil {
		return err
	}
	trainSet := f.limitSet(d.Train)
	loader, err := data.NewLoader(trainSet, f.batch, data.Shuffle(f.seed))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "training recommender on %d ratings, testing on %d (%d users, %d movies; SGD lr %g, batch %d, seed %d)\n",
		trainSet.Len(), d.Test.Len(), d.Sizes.Users-1, d.Sizes.Movies-1, f.lr, f.batch, f.seed)
	_, err = runChapter(f, trainpkg.Config[*data.Batch]{
		Params: m.Params(), Optimizer: opt, Train: loader, Loss: m.BatchLoss,
		Evaluate: m.Evaluator(d.Test, 1000), Monitor: "mse",
	}, runlog.Record{Model: f.runName("recommender", 5, recommender.Batch), Config: map[string]any{
		"epochs": f.epochs, "batch": f.batch, "lr": f.lr, "seed": f.seed, "optimizer": "sgd",
		"train_size": trainSet.Len(), "test_size": d.Test.Len(),
	}}, stdout, stderr)
	return err
}
