//go:build !cuda

package main

import (
	"fmt"
	"io"

	"github.com/plumbml/plumb/tensor"
)

// checkDevice accepts only the CPU: this binary was built without the
// `cuda` tag, so it holds no GPU code (see ops/cuda).
func checkDevice(device string) error {
	switch device {
	case "cpu":
		return nil
	case "cuda":
		return fmt.Errorf("--device cuda: this plumb was built without CUDA; build it with `go build -tags cuda ./cmd/plumb` " +
			"(needs cuda.h and libcuda to link, and an NVIDIA driver to run)")
	}
	return fmt.Errorf("--device %q: want cpu or cuda", device)
}

// openDevice returns nil (host memory) for cpu; checkDevice refuses the rest.
func openDevice(device string, _ io.Writer) (tensor.Device, func() error, error) {
	if err := checkDevice(device); err != nil {
		return nil, nil, err
	}
	return nil, func() error { return nil }, nil
}
