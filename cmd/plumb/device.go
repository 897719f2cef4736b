package main

import (
	"errors"
	"io"

	"github.com/plumbml/plumb/graph"
)

// moveModel opens the device --device names and moves the model's
// parameters there, so that it trains (or evaluates) there with the
// ordinary loop; it returns the function that closes the device.
func moveModel(device string, params []*graph.Param, stdout io.Writer) (func() error, error) {
	dev, closeDev, err := openDevice(device, stdout)
	if err != nil {
		return nil, err
	}
	if err := graph.ParamsTo(params, dev); err != nil {
		return nil, errors.Join(err, closeDev())
	}
	return closeDev, nil
}
