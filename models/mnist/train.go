package mnist

import (
	"fmt"
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
func Train(net Model, opt optim.Optimizer, train, test *data.Dataset, cfg Config, progress func(Progress), epochEnd func(Epoch)) error {
	if cfg.Epochs <= 0 || cfg.Batch <= 0 {
		return fmt.Errorf("mnist: train: epochs=%d batch=%d must be positive", cfg.Epochs, cfg.Batch)
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
			loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(b.Tensor("image"))), b.Tensor("label"))
			if err := tape.Backward(loss); err != nil {
				return err
			}
			if err := opt.Step(); err != nil {
				return err
			}
			l, err := loss.Item()
			if err != nil {
				return err
			}
			tape.Release()
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
		acc, testLoss, err := Evaluate(net, test, 500)
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

// Evaluate returns the accuracy and mean loss of net on ds, in inference
// mode (batch norm on its moving statistics), in batches of size batch.
func Evaluate(net Model, ds *data.Dataset, batch int) (accuracy, loss float64, err error) {
	if ds.Len() == 0 {
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
