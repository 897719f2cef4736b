//go:build cuda

package main

import (
	"fmt"
	"io"

	"github.com/plumbml/plumb/ops/cuda"
	"github.com/plumbml/plumb/tensor"
)

// openDevice returns the device --device names: nil (host memory) for cpu,
// GPU 0 for cuda, with the function that closes it.
func openDevice(device string, stdout io.Writer) (tensor.Device, func() error, error) {
	switch device {
	case "cpu":
		return nil, func() error { return nil }, nil
	case "cuda":
		d, err := cuda.Open(0)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(stdout, "on %s, %v\n", d.Name(), d)
		return d, d.Close, nil
	}
	return nil, nil, checkDevice(device)
}

// checkDevice accepts cpu and cuda.
func checkDevice(device string) error {
	switch device {
	case "cpu", "cuda":
		return nil
	}
	return fmt.Errorf("--device %q: want cpu or cuda", device)
}
