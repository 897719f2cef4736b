//go:build cuda

package main

import (
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/mnist/gpu"
	"github.com/plumbml/plumb/ops/cuda"
	"github.com/plumbml/plumb/optim"
)

// checkDevice accepts cpu, and cuda for the CNN, the model with a GPU
// training step (models/mnist/gpu).
func checkDevice(device, model string) error {
	switch {
	case device == "cpu":
		return nil
	case device == "cuda" && model != "cnn":
		return fmt.Errorf("--device cuda trains the cnn only, not %q", model)
	case device == "cuda":
		return nil
	}
	return fmt.Errorf("--device %q: want cpu or cuda", device)
}

// trainCUDA trains the CNN net on GPU 0 with Adam at lr, then copies the
// weights and the optimizer's state back into net and opt for --save.
func trainCUDA(net mnist.Model, opt optim.Optimizer, lr float64, train, test *data.Dataset, cfg mnist.Config,
	progress func(mnist.Progress), epochEnd func(mnist.Epoch), stdout io.Writer) (err error) {
	d, err := cuda.Open(0)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}()
	fmt.Fprintf(stdout, "on %s\n", d.Name())
	t, err := gpu.New(d, net, opt, lr, cfg.Batch)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.Train(train, test, cfg, progress, epochEnd); err != nil {
		return err
	}
	return t.Sync()
}

// evalCUDA returns the accuracy and mean loss of the CNN net on test,
// evaluated on GPU 0.
func evalCUDA(net mnist.Model, test *data.Dataset, stdout io.Writer) (acc, loss float64, err error) {
	d, err := cuda.Open(0)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}()
	fmt.Fprintf(stdout, "on %s\n", d.Name())
	t, err := gpu.New(d, net, nil, 1e-3, 500)
	if err != nil {
		return 0, 0, err
	}
	defer t.Close()
	return t.Evaluate(test)
}
