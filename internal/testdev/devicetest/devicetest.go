// Package devicetest holds what the models' device tests share: a step of
// a model on a device compared with the same step on the host.
package devicetest

import (
	"fmt"
	"math"

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

// Model is what SameStep builds afresh for each run: a model's parameters
// and its loss on a fixed batch.
type Model func() (params []*graph.Param, loss func(*graph.Tape) *graph.Value, err error)

// step builds the model, moves it to dev, and returns its loss and host
// copies of its gradients after one Backward.
func step(build Model, dev tensor.Device) (float64, []*tensor.Tensor, error) {
	ps, lossFn, err := build()
	if err != nil {
		return 0, nil, err
	}
	if err := graph.ParamsTo(ps, dev); err != nil {
		return 0, nil, err
	}
	tape := graph.NewTape()
	defer tape.Release()
	l := lossFn(tape)
	if err := tape.Backward(l); err != nil {
		return 0, nil, err
	}
	v, err := l.Item()
	if err != nil {
		return 0, nil, err
	}
	grads, err := HostGrads(ps, dev)
	return v, grads, err
}

// SameStep takes the model's step on the host and on dev and returns an
// error naming the first loss or gradient element that differs by more
// than tol.
func SameStep(build Model, dev tensor.Device, tol float64) error {
	want, wantG, err := step(build, nil)
	if err != nil {
		return fmt.Errorf("devicetest: on the host: %w", err)
	}
	got, gotG, err := step(build, dev)
	if err != nil {
		return fmt.Errorf("devicetest: on %v: %w", dev, err)
	}
	if math.Abs(got-want) > tol {
		return fmt.Errorf("devicetest: loss %v on %v, %v on the host", got, dev, want)
	}
	if len(gotG) != len(wantG) {
		return fmt.Errorf("devicetest: %d gradients on %v, %d on the host", len(gotG), dev, len(wantG))
	}
	for i := range wantG {
		for j := range wantG[i].Size() {
			if w, g := wantG[i].At(j), gotG[i].At(j); math.Abs(g-w) > tol {
				return fmt.Errorf("devicetest: gradient %d element %d is %v on %v, %v on the host", i, j, g, dev, w)
			}
		}
	}
	return nil
}
