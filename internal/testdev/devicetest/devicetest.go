// Package devicetest holds what the models' device tests share: reading a
// model's gradients back from the device it trained on.
package devicetest

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// HostGrads returns host copies of the dense gradients of ps (skipping
// parameters without one), checking that each was on dev.
func HostGrads(ps []*graph.Param, dev tensor.Device) ([]*tensor.Tensor, error) {
	var grads []*tensor.Tensor
	for _, p := range ps {
		g, err := p.DenseGrad()
		if err != nil {
			return nil, err
		}
		if g == nil {
			continue
		}
		if g.Device() != dev {
			return nil, fmt.Errorf("devicetest: the gradient of %q is on %s, want %s", p.Name, tensor.DeviceName(g.Device()), tensor.DeviceName(dev))
		}
		h, err := g.To(nil)
		if err != nil {
			return nil, err
		}
		grads = append(grads, h)
	}
	return grads, nil
}
