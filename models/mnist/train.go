package mnist

import (
	"errors"
	"fmt"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/train"
)

// Config is one training run. The book trains with Adam at 1e-3 and batch 64.
type Config struct {
	Epochs int
	Batch  int
	Seed   uint64 // shuffling seed

	// Optional, passed to train.Config: the best epoch's parameters (by
	// test accuracy), the state a run resumes from, and more hooks (a run
	// log: train.LogTo).
	BestPath, StatePath, ResumeFrom string
	Hooks                           []train.Hooks
	// Replicas, if set, trains data-parallel (package dist): each rank
	// takes its shard of every epoch (data.Loader.Shard) at Batch
	// examples a step.
	Replicas train.Replicas
}

// Progress is reported after every training batch and while evaluating.
type Progress = train.Progress

// Epoch is reported at the end of every epoch.
type Epoch struct {
	Epoch         int
	TrainLoss     float64 // mean over the epoch's examples
	TestAccuracy  float64
	TestLoss      float64
	SamplesPerSec float64 // training throughput
	Duration      time.Duration
}

// Train runs cfg.Epochs passes over trainSet in shuffled batches of
// cfg.Batch on the generic trainer (package train), stepping opt after
// every batch, and evaluates on test after each epoch. progress and
// epochEnd may be nil.
//
// Training stops with an error naming the epoch and step at the first
// batch whose loss is NaN or infinite (a diverged run, or NaN in the
// data), before that batch updates the parameters, so a caller that saves
// only on success never saves a diverged model. An empty training or test
// set is an error too: it would "train" nothing.
func Train(net Model, opt optim.Optimizer, trainSet, test *data.Dataset, cfg Config, progress func(Progress), epochEnd func(Epoch)) error {
	switch {
	case net == nil || opt == nil:
		return fmt.Errorf("mnist: train: needs a model and an optimizer (got model %v, optimizer %v)", net, opt)
	case trainSet == nil || test == nil:
		return fmt.Errorf("mnist: train: needs a training and a test set (got %v, %v)", trainSet, test)
	case cfg.Epochs <= 0 || cfg.Batch <= 0:
		return fmt.Errorf("mnist: train: epochs=%d batch=%d must be positive", cfg.Epochs, cfg.Batch)
	case trainSet.Len() == 0:
		return fmt.Errorf("mnist: train: the training set is empty")
	case test.Len() == 0:
		return fmt.Errorf("mnist: train: the test set is empty")
	}
	loader, err := data.NewLoader(trainSet, cfg.Batch, data.Shuffle(cfg.Seed))
	if err == nil && cfg.Replicas != nil {
		loader, err = loader.Shard(cfg.Replicas.Rank(), cfg.Replicas.Size())
	}
	if err != nil {
		return fmt.Errorf("mnist: train: %w", err)
	}
	hooks := cfg.Hooks
	if epochEnd != nil {
		hooks = append(hooks[:len(hooks):len(hooks)], train.Hooks{Epoch: func(e train.Epoch) error {
			epochEnd(Epoch{Epoch: e.Epoch, TrainLoss: e.TrainLoss, TestAccuracy: e.Metrics["accuracy"], TestLoss: e.Metrics["loss"],
				SamplesPerSec: e.SamplesPerSec, Duration: e.Duration})
			return nil
		}})
	}
	_, err = train.Run(train.Config[*data.Batch]{
		Params:    net.Params(),
		Optimizer: opt,
		Train:     loader,
		Loss:      Loss(net),
		Device:    graph.DeviceOf(net.Params()),
		Epochs:    cfg.Epochs,
		Evaluate:  Evaluator(net, test, evalBatch),
		Monitor:   "accuracy", Maximize: true,
		BestPath: cfg.BestPath, StatePath: cfg.StatePath, ResumeFrom: cfg.ResumeFrom,
		Progress: progress,
		Hooks:    hooks,
		Replicas: cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("mnist: %w", err)
	}
	return nil
}

// evalBatch is the batch size of the evaluation after each epoch.
const evalBatch = 500

// Loss is the training loss of net: the mean softmax cross-entropy of its
// logits on a batch (fields "image" and "label", on net's device: the
// trainer moves them, train.Config.Device), and the batch's size.
func Loss(net Model) train.LossFunc[*data.Batch] {
	return func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
		return graph.SoftmaxCrossEntropy(net.Forward(t.Const(b.Tensor("image"))), b.Tensor("label")), b.Len()
	}
}

// Evaluator returns the evaluation of net on ds, in batches of size
// batch, as a train.Evaluator: metrics "accuracy" and "loss".
func Evaluator(net Model, ds *data.Dataset, batch int) train.Evaluator {
	return func(report func(done, total int)) (train.Metrics, error) {
		acc, loss, err := evaluate(net, ds, batch, report)
		if err != nil {
			return nil, err
		}
		return train.Metrics{"accuracy": acc, "loss": loss}, nil
	}
}

// Evaluate returns the accuracy and mean loss of net on ds, in inference
// mode (batch norm on its moving statistics), in batches of size batch.
// A batch size below 1, a nil model and an empty or nil dataset are errors.
func Evaluate(net Model, ds *data.Dataset, batch int) (accuracy, loss float64, err error) {
	return evaluate(net, ds, batch, nil)
}

// evaluate is Evaluate, calling report (if not nil) after every batch.
func evaluate(net Model, ds *data.Dataset, batch int, report func(done, total int)) (accuracy, loss float64, err error) {
	switch {
	case net == nil || ds == nil:
		return 0, 0, fmt.Errorf("mnist: evaluate: needs a model and a dataset (got model %v, dataset %v)", net, ds)
	case batch < 1:
		return 0, 0, fmt.Errorf("mnist: evaluate: batch size %d, want at least 1", batch)
	case ds.Len() == 0:
		return 0, 0, errors.New("mnist: evaluate on an empty dataset")
	}
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return 0, 0, err
	}
	m, err := train.EvaluateOn(graph.DeviceOf(net.Params()), loader, func(t *graph.Tape, b *data.Batch) (train.Metrics, int, error) {
		m, err := train.Classification(net.Forward(t.Const(b.Tensor("image"))), b.Tensor("label"))
		return m, b.Len(), err
	}, report)
	return m["accuracy"], m["loss"], err
}
