//go:build !cuda

package main

import (
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
)

// checkDevice accepts only the CPU: this binary was built without the
// `cuda` tag, so it holds no GPU code (see ops/cuda).
func checkDevice(device, _ string) error {
	switch device {
	case "cpu":
		return nil
	case "cuda":
		return fmt.Errorf("--device cuda: this plumb was built without CUDA; build it with `go build -tags cuda ./cmd/plumb` " +
			"(needs cuda.h and libcuda to link, and an NVIDIA driver to run)")
	}
	return fmt.Errorf("--device %q: want cpu or cuda", device)
}

// trainCUDA is never reached in this build: checkDevice refuses cuda.
func trainCUDA(mnist.Model, optim.Optimizer, float64, *data.Dataset, *data.Dataset, mnist.Config, func(mnist.Progress), func(mnist.Epoch), io.Writer) error {
	return checkDevice("cuda", "")
}

// evalCUDA is never reached in this build: checkDevice refuses cuda.
func evalCUDA(mnist.Model, *data.Dataset, io.Writer) (float64, float64, error) {
	return 0, 0, checkDevice("cuda", "")
}
