package ops

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// fallbackOp runs a CPU op on inputs that live on a device: it copies them
// to the host, runs the CPU kernel, and copies the output (in Backward, the
// gradients) back to the device. Only ops a device registered with
// RegisterFallback run this way.
type fallbackOp struct {
	cpu Op
	dev tensor.Device
}

func (o *fallbackOp) Name() string          { return o.cpu.Name() }
func (o *fallbackOp) Device() tensor.Device { return o.dev }

func (o *fallbackOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	host, err := o.down(in)
	if err != nil {
		return nil, err
	}
	out, err := o.cpu.Forward(host)
	if err != nil {
		return nil, err
	}
	return o.up(out)
}

func (o *fallbackOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	host, err := o.down(append(append(make([]*tensor.Tensor, 0, len(in)+2), in...), out, gout))
	if err != nil {
		return nil, err
	}
	n := len(in)
	grads, err := o.cpu.Backward(host[:n], host[n], host[n+1], need)
	if err != nil {
		return nil, err
	}
	for i, g := range grads {
		if g != nil {
			if grads[i], err = o.up(g); err != nil {
				return nil, err
			}
		}
	}
	return grads, nil
}

// down copies the device tensors in to the host.
func (o *fallbackOp) down(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
	host := make([]*tensor.Tensor, len(in))
	var errs []error
	for i, t := range in {
		if t == nil {
			continue
		}
		h, err := t.To(nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (host fallback on %v): input %d: %w", o.Name(), o.dev, i, err))
		}
		host[i] = h
	}
	return host, errors.Join(errs...)
}

// up copies a host result to the device.
func (o *fallbackOp) up(t *tensor.Tensor) (*tensor.Tensor, error) {
	d, err := t.To(o.dev)
	if err != nil {
		return nil, fmt.Errorf("%s (host fallback on %v): %w", o.Name(), o.dev, err)
	}
	return d, nil
}
