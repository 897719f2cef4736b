package mnist

import (
	"fmt"
	"math"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/optim"
)

// Config is one training run. The book trains with Adam at 1e-3 and batch 64.
type Config struct {
	Epochs int
	Batch  int
	Seed   uint64 // shuffling seed
}

// Progress is reported after every training batch.
type Progress struct {
	Epoch, Epochs int
	Done, Total   int     // samples done in this epoch, and its size
	Loss          float64 // running mean training loss this epoch
	SamplesPerSec float64
	ETA           time.Duration // until the end of this epoch
}

// Epoch is reported at the end of every epoch.
type Epoch struct {
	Epoch         int
	TrainLoss     float64 // mean over the epoch's batches
	TestAccuracy  float64
	TestLoss      float64
	SamplesPerSec float64 // training throughput
	Duration      time.Duration
}

// Train runs cfg.Epochs passes over train, stepping opt after every batch,
// and evaluates on test after each epoch. progress and epochEnd may be nil.
// One tape serves every batch and is released after each (Tape.Release),
// so a step reuses the previous step's tensors instead of allocating.
//
// Training stops with an error naming the epoch and step at the first
// batch whose loss is NaN or infinite (a diverged run, or NaN in the
// data), before that batch updates the parameters, so a caller that saves
// only on success never saves a diverged model. An empty training or test
// set is an error too: it would "train" nothing.
func Train(net Model, opt optim.Optimizer, train, test *data.Dataset, cfg Config, progress func(Progress), epochEnd func(Epoch)) error {
	switch {
	case net == nil || opt == nil:
		return fmt.Errorf("mnist: train: needs a model and an optimizer (got model %v, optimizer %v)", net, opt)
	case train == nil || test == nil:
		return fmt.Errorf("mnist: train: needs a training and a test set (got %v, %v)", train, test)
	case cfg.Epochs <= 0 || cfg.Batch <= 0:
		return fmt.Errorf("mnist: train: epochs=%d batch=%d must be positive", cfg.Epochs, cfg.Batch)
	case train.Len() == 0:
		return fmt.Errorf("mnist: train: the training set is empty")
	case test.Len() == 0:
		return fmt.Errorf("mnist: train: the test set is empty")
	}
	loader, err := data.NewLoader(train, cfg.Batch, data.Shuffle(cfg.Seed))
	if err != nil {
		return err
	}
	tape := graph.NewTape()
	for e := 1; e <= cfg.Epochs; e++ {
		start := time.Now()
		var sum float64
		done, batches := 0, 0
		for b, err := range loader.Batches(e - 1) {
			if err != nil {
				return err
			}
			l, err := step(tape, net, opt, b)
			if err != nil {
				return fmt.Errorf("mnist: train: epoch %d, step %d: %w", e, batches+1, err)
			}
			sum += l
			batches++
			done += b.Len()
			if progress != nil {
				el := time.Since(start)
				rate := float64(done) / el.Seconds()
				progress(Progress{
					Epoch: e, Epochs: cfg.Epochs, Done: done, Total: train.Len(), Loss: sum / float64(batches),
					SamplesPerSec: rate, ETA: time.Duration(float64(train.Len()-done) / rate * float64(time.Second)),
				})
			}
		}
		dur := time.Since(start)
		acc, testLoss, err := Evaluate(net, test, evalBatch)
		if err != nil {
			return err
		}
		if epochEnd != nil {
			epochEnd(Epoch{Epoch: e, TrainLoss: sum / float64(max(batches, 1)), TestAccuracy: acc, TestLoss: testLoss,
				SamplesPerSec: float64(done) / dur.Seconds(), Duration: dur})
		}
	}
	return nil
}

// evalBatch is the batch size of the evaluation after each epoch.
const evalBatch = 500

// step runs one training step on b and returns its loss. A non-finite loss
// is an error, returned before the optimizer touches the parameters.
func step(tape *graph.Tape, net Model, opt optim.Optimizer, b *data.Batch) (float64, error) {
	defer tape.Release()
	loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(b.Tensor("image"))), b.Tensor("label"))
	l, err := loss.Item()
	if err != nil {
		return 0, err
	}
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return 0, fmt.Errorf("loss is %v: the run diverged (lower --lr?) or the data holds NaN or Inf", l)
	}
	if err := tape.Backward(loss); err != nil {
		return 0, err
	}
	return l, opt.Step()
}

// Evaluate returns the accuracy and mean loss of net on ds, in inference
// mode (batch norm on its moving statistics), in batches of size batch.
// A batch size below 1, a nil model and an empty or nil dataset are errors.
func Evaluate(net Model, ds *data.Dataset, batch int) (accuracy, loss float64, err error) {
	switch {
	case net == nil || ds == nil:
		return 0, 0, fmt.Errorf("mnist: evaluate: needs a model and a dataset (got model %v, dataset %v)", net, ds)
	case batch < 1:
		return 0, 0, fmt.Errorf("mnist: evaluate: batch size %d, want at least 1", batch)
	case ds.Len() == 0:
		return 0, 0, fmt.Errorf("mnist: evaluate on an empty dataset")
	}
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return 0, 0, err
	}
	correct, total := 0.0, 0
	tape := graph.NewEvalTape()
	for b, err := range loader.Batches(0) {
		if err != nil {
			return 0, 0, err
		}
		logits := net.Forward(tape.Const(b.Tensor("image")))
		l, err := graph.SoftmaxCrossEntropy(logits, b.Tensor("label")).Item()
		if err != nil {
			return 0, 0, err
		}
		lt, err := logits.Tensor()
		if err != nil {
			return 0, 0, err
		}
		acc, err := ops.Accuracy(lt, b.Tensor("label"))
		if err != nil {
			return 0, 0, err
		}
		tape.Release()
		n := b.Len()
		correct += acc * float64(n)
		loss += l * float64(n)
		total += n
	}
	return correct / float64(total), loss / float64(total), nil
}
