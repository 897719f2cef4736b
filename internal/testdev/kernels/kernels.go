// Package kernels registers a kernel on the test device (internal/testdev)
// for every op that ops.Build makes, in float32 and float64: the CPU op run
// on the storage's private host tensors, its results moved to the device;
// an op that does not give its attributes (ops.Attributed) gets a host
// fallback instead.
// Importing it lets the tests of graph, layers and optim run a whole model
// "on a device" and check the tape, the pools and the optimizers there
// against the CPU, without a GPU.
package kernels

import (
	"fmt"

	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	for _, name := range ops.Buildable() {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			if op, err := ops.Build(name, ops.Attrs{}); err == nil {
				if _, ok := op.(ops.Attributed); !ok { // no attributes to build a kernel from: a fallback, as a GPU lists them
					if err := ops.RegisterFallback(name, "testdev", dt); err != nil {
						panic(err)
					}
					continue
				}
			}
			err := ops.RegisterKernel(name, "testdev", dt, func(dev tensor.Device, a any) (ops.Op, error) {
				s, _ := ops.Lookup(name)
				cpu, err := s.Make.Make(a)
				if err != nil {
					return nil, err
				}
				return &hostKernel{cpu: cpu, dev: dev.(*testdev.Device)}, nil
			})
			if err != nil {
				panic(err)
			}
		}
	}
}

// hostKernel runs cpu on the host tensors behind device storage.
type hostKernel struct {
	cpu ops.Op
	dev *testdev.Device
}

func (k *hostKernel) Name() string          { return k.cpu.Name() }
func (k *hostKernel) Device() tensor.Device { return k.dev }

func (k *hostKernel) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	out, err := k.cpu.Forward(host(in))
	if err != nil {
		return nil, err
	}
	return out.To(k.dev)
}

func (k *hostKernel) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	h := host([]*tensor.Tensor{out, gout})
	grads, err := k.cpu.Backward(host(in), h[0], h[1], need)
	if err != nil {
		return nil, err
	}
	for i, g := range grads {
		if g != nil {
			if grads[i], err = g.To(k.dev); err != nil {
				return nil, err
			}
		}
	}
	return grads, nil
}

// host returns the host tensors behind the device tensors in, shaped as
// the device tensors (a Reshape view has its own shape).
func host(in []*tensor.Tensor) []*tensor.Tensor {
	h := make([]*tensor.Tensor, len(in))
	for i, t := range in {
		if t == nil {
			continue
		}
		s, ok := t.Storage().(*testdev.Storage)
		if !ok {
			h[i] = t
			continue
		}
		h[i], _ = s.Host().Reshape(t.Shape()...)
	}
	return h
}

func init() {
	if err := ops.RegisterUpdate("testdev", sgd, nil); err != nil {
		panic(err)
	}
}

// sgd is the test device's update kernel: plain SGD with L2 only, enough
// for optim's tests to check that an update runs where its parameter is.
func sgd(u ops.Update, v, g *tensor.Tensor, _ []*tensor.Tensor) error {
	if u.Rule != "sgd" {
		return fmt.Errorf("testdev: no %s update", u.Rule)
	}
	h := host([]*tensor.Tensor{v, g})
	for i := range h[0].Size() {
		x := h[0].At(i)
		h[0].SetAt(i, x-u.LR*(h[1].At(i)+u.L2*x))
	}
	return nil
}
