package optim

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// device returns the device of the active parameters (nil: host memory),
// or an error when they are on more than one.
func (o *optimizer) device() (tensor.Device, error) {
	var dev tensor.Device
	for k, i := range o.active {
		d := o.params[i].Value.Device()
		if k == 0 {
			dev = d
		} else if d != dev {
			return nil, fmt.Errorf("optim: %s: parameter %q is on %s but %q is on %s; one optimizer updates parameters on one device",
				o.rule.name, o.params[o.active[0]].Name, tensor.DeviceName(dev), o.params[i].Name, tensor.DeviceName(d))
		}
	}
	return dev, nil
}

// stepDevice is Step for parameters on a device: the rule runs as the
// device's update kernel (ops.RegisterUpdate), with L2 and AdamW's decay
// folded into it. Slots made on the host (the optimizer was built before
// the model moved) follow their parameter on the first step. done is the
// number of steps taken and lr the step's learning rate.
func (o *optimizer) stepDevice(dev tensor.Device, done int64, lr float64) error {
	kernel, clip, ok := ops.UpdateOn(dev.Kind())
	switch {
	case !ok:
		return fmt.Errorf("optim: %s: no update kernel on %v", o.rule.name, dev)
	case o.cfg.clipNorm > 0 && clip == nil:
		return fmt.Errorf("optim: %s: GlobalClipNorm is not implemented on %v", o.rule.name, dev)
	}
	for _, i := range o.active {
		p := o.params[i]
		if p.SparseGrad != nil {
			return fmt.Errorf("optim: %s: parameter %q has a sparse gradient on %v", o.rule.name, p.Name, dev)
		}
		bad, err := nonFinite(p.Grad)
		if err != nil {
			return fmt.Errorf("optim: %s: parameter %q: %w", o.rule.name, p.Name, err)
		}
		if bad {
			return fmt.Errorf("optim: %s: step %d: the gradient of %q holds NaN or Inf (the loss diverged, or the inputs hold NaN or Inf); no parameter was updated",
				o.rule.name, done+1, p.Name)
		}
		for _, s := range o.slots[i] {
			if s.Value.Device() != dev {
				if err := s.To(dev); err != nil {
					return err
				}
			}
		}
	}
	l2 := o.cfg.l2
	if o.cfg.clipNorm > 0 { // as on the host: L2 into the gradients, then clip them together
		values, grads := make([]*tensor.Tensor, len(o.active)), make([]*tensor.Tensor, len(o.active))
		for k, i := range o.active {
			values[k], grads[k] = o.params[i].Value, o.params[i].Grad
		}
		if err := clip(values, grads, l2, o.cfg.clipNorm); err != nil {
			return fmt.Errorf("optim: %s: %w", o.rule.name, err)
		}
		l2 = 0
	}
	for _, i := range o.active {
		p := o.params[i]
		lrI := lr * o.lrMult[i]
		u := o.rule.coef(lrI, done+1)
		u.L2, u.Decay = l2, lrI*o.cfg.weightDecay
		slots := make([]*tensor.Tensor, len(o.slots[i]))
		for j, s := range o.slots[i] {
			slots[j] = s.Value
		}
		if err := kernel(u, p.Value, p.Grad, slots); err != nil {
			return fmt.Errorf("optim: %s: parameter %q: %w", o.rule.name, p.Name, err)
		}
		p.ZeroGrad()
	}
	o.iter.Value.Int64s()[0] = done + 1
	return nil
}

// nonFinite reports whether the device tensor g holds NaN or Inf: its sum,
// taken by the device's reduction, is then NaN or Inf, and only that one
// number comes back to the host.
func nonFinite(g *tensor.Tensor) (bool, error) {
	s, err := ops.Run(ops.ReduceOp("sum", nil, false), g)
	if err != nil {
		return false, err
	}
	defer s.Storage().Free()
	h, err := s.To(nil)
	if err != nil {
		return false, err
	}
	v := h.At(0)
	return math.IsNaN(v) || math.IsInf(v, 0), nil
}
