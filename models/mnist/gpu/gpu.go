//go:build cuda

package gpu

import (
	"fmt"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/ops/cuda"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// reportEvery is how many steps pass between reads of the loss from the
// device, and so between progress reports.
const reportEvery = 50

// Trainer holds a models/mnist CNN on the device, with Adam.
type Trainer struct {
	m   *cuda.MNISTCNN
	net mnist.Model
	opt optim.Optimizer // the host twin of the device's Adam, for checkpoints
}

// New uploads net, a models/mnist CNN, to d with Adam at learning rate lr
// (Keras' other defaults, as models/mnist's recipe), for batches of up to
// batch images. opt, an optim.NewAdam over net.Params(), receives the
// device optimizer's state on Sync, so that a checkpoint holds it.
func New(d *cuda.Device, net mnist.Model, opt optim.Optimizer, lr float64, batch int) (*Trainer, error) {
	host := map[string]*tensor.Tensor{}
	for _, p := range net.Params() {
		host[p.Name] = p.Value
	}
	cfg := cuda.DefaultOptimConfig(cuda.Adam)
	var err error
	if cfg.LR, err = optim.Constant(lr); err != nil {
		return nil, fmt.Errorf("gpu: %w", err)
	}
	m, err := d.NewMNISTCNN(host, batch, cfg)
	if err != nil {
		return nil, err
	}
	return &Trainer{m: m, net: net, opt: opt}, nil
}

// Close frees the device memory.
func (t *Trainer) Close() { t.m.Free() }

// Train runs cfg.Epochs passes over train in shuffled batches of cfg.Batch,
// as models/mnist.Train does (the same shuffling for the same seed), and
// evaluates on test after each epoch. The loss comes back from the device
// every reportEvery steps, when progress (which may be nil) is called;
// epochEnd (which may be nil) gets each epoch's summary.
func (t *Trainer) Train(train, test *data.Dataset, cfg mnist.Config, progress func(mnist.Progress), epochEnd func(mnist.Epoch)) error {
	if cfg.Epochs <= 0 || cfg.Batch <= 0 || cfg.Batch > t.m.Batch() {
		return fmt.Errorf("gpu: train: epochs=%d must be positive and batch=%d in [1, %d]", cfg.Epochs, cfg.Batch, t.m.Batch())
	}
	loader, err := data.NewLoader(train, cfg.Batch, data.Shuffle(cfg.Seed))
	if err != nil {
		return err
	}
	for e := 1; e <= cfg.Epochs; e++ {
		start := time.Now()
		var sum float64
		done, batches, pending := 0, 0, 0
		report := func() error {
			s, k, err := t.m.LossSum()
			if err != nil {
				return err
			}
			sum, batches, pending = sum+s, batches+k, 0
			if progress != nil && batches > 0 {
				rate := float64(done) / time.Since(start).Seconds()
				progress(mnist.Progress{Epoch: e, Epochs: cfg.Epochs, Done: done, Total: train.Len(), Loss: sum / float64(batches),
					SamplesPerSec: rate, ETA: time.Duration(float64(train.Len()-done) / rate * float64(time.Second))})
			}
			return nil
		}
		for b, err := range loader.Batches(e - 1) {
			if err != nil {
				return err
			}
			if err := t.m.Step(b.Tensor("image"), b.Tensor("label")); err != nil {
				return err
			}
			done += b.Len()
			if pending++; pending == reportEvery {
				if err := report(); err != nil {
					return err
				}
			}
		}
		if err := report(); err != nil {
			return err
		}
		dur := time.Since(start)
		acc, testLoss, err := t.Evaluate(test)
		if err != nil {
			return err
		}
		if epochEnd != nil {
			epochEnd(mnist.Epoch{Epoch: e, TrainLoss: sum / float64(max(batches, 1)), TestAccuracy: acc, TestLoss: testLoss,
				SamplesPerSec: float64(done) / dur.Seconds(), Duration: dur})
		}
	}
	return nil
}

// Evaluate returns the accuracy and mean loss on ds in inference mode
// (batch norm on its moving statistics), as mnist.Evaluate, computed on
// the device.
func (t *Trainer) Evaluate(ds *data.Dataset) (accuracy, loss float64, err error) {
	if ds.Len() == 0 {
		return 0, 0, fmt.Errorf("gpu: evaluate on an empty dataset")
	}
	loader, err := data.NewLoader(ds, t.m.Batch())
	if err != nil {
		return 0, 0, err
	}
	for b, err := range loader.Batches(0) {
		if err != nil {
			return 0, 0, err
		}
		if err := t.m.Eval(b.Tensor("image"), b.Tensor("label")); err != nil {
			return 0, 0, err
		}
	}
	accuracy, loss, _, err = t.m.EvalTotals()
	return accuracy, loss, err
}

// Sync copies the device's parameters and moving statistics into the
// host model and the device Adam's moments and step count into the host
// optimizer's state (when it was given), so that checkpoint.Save writes
// what the GPU trained.
func (t *Trainer) Sync() error {
	for _, p := range t.net.Params() {
		b := t.m.Param(p.Name)
		if b == nil {
			return fmt.Errorf("gpu: the device model has no tensor %q", p.Name)
		}
		if err := b.CopyTo(p.Value); err != nil {
			return fmt.Errorf("gpu: %s: %w", p.Name, err)
		}
	}
	if t.opt == nil {
		return nil
	}
	state := map[string]*graph.Param{}
	for _, s := range t.opt.State() {
		state[s.Name] = s
	}
	dopt := t.m.Optimizer()
	for i, name := range t.m.TrainableNames() {
		for j, slot := range dopt.SlotNames() {
			s, ok := state[name+"/"+slot]
			if !ok {
				return fmt.Errorf("gpu: the host optimizer has no slot %s/%s", name, slot)
			}
			if err := dopt.Slots(i)[j].CopyTo(s.Value); err != nil {
				return fmt.Errorf("gpu: %s/%s: %w", name, slot, err)
			}
		}
	}
	it, ok := state["iterations"]
	if !ok || it.Value.DType() != tensor.Int64 || it.Value.Size() != 1 {
		return fmt.Errorf("gpu: the host optimizer has no int64 iterations state")
	}
	it.Value.Int64s()[0] = dopt.Iterations()
	return nil
}
