//go:build cuda

package cuda

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// update is the device's ops.UpdateKernel: one step of an optimizer rule of
// package optim on a parameter, its gradient and its slots, all float32
// tensors on the device, with the rule's kernel of kernels/optim.cu
// (updateKernels). optim declares each rule and its coefficients once and
// has checked the shapes and dtypes; what is checked here is what the
// device's memory needs: every tensor is a float32 buffer on this device
// of the parameter's size, and the rule has its slots.
func update(u ops.Update, v, g *tensor.Tensor, slots []*tensor.Tensor) error {
	d, ok := v.Device().(*Device)
	if !ok {
		return fmt.Errorf("cuda: update of a parameter on %s", tensor.DeviceName(v.Device()))
	}
	k, ok := updateKernels[u.Rule]
	if !ok {
		return fmt.Errorf("cuda: no update kernel for rule %q", u.Rule)
	}
	bufs := []*Buffer{view(v), view(g)}
	for _, s := range slots {
		bufs = append(bufs, view(s))
	}
	for i, b := range bufs {
		if b == nil || b.dev != d || b.dtype != tensor.Float32 || b.Size() != bufs[0].Size() {
			return fmt.Errorf("cuda: %s update: tensor %d is not a float32 tensor of the parameter's size on %v", u.Rule, i, d)
		}
	}
	if want := k.slots(u); len(slots) != want {
		return fmt.Errorf("cuda: %s update with %d slots, want %d", u.Rule, len(slots), want)
	}
	if u.Decay != 0 && u.Rule != "adam" {
		return fmt.Errorf("cuda: %s update: decoupled weight decay is AdamW's only", u.Rule)
	}
	p, gr, s := bufs[0], bufs[1], bufs[2:]
	n := p.Size()
	if n == 0 {
		return nil
	}
	return d.do(func() error { return k.launch(d, u, grid1(n), n, p, gr, s) })
}

// updateKernel launches one rule's kernel on n elements of the parameter
// p with gradient g and the rule's slots s, in optim's order; slots says
// how many the rule has for u.
type updateKernel struct {
	slots  func(u ops.Update) int
	launch func(d *Device, u ops.Update, grid [3]int, n int, p, g *Buffer, s []*Buffer) error
}

// fixed is the slot count of a rule whose slots do not depend on its
// options.
func fixed(n int) func(ops.Update) int { return func(ops.Update) int { return n } }

// rmspropSlots counts RMSProp's slots: ms, then mom with momentum, then mg
// when centered.
func rmspropSlots(u ops.Update) int {
	n := 1
	if u.Momentum > 0 {
		n++
	}
	if u.Centered {
		n++
	}
	return n
}

// updateKernels are the device's update kernels, keyed by ops.Update.Rule.
var updateKernels = map[string]updateKernel{
	"sgd": {fixed(0), func(d *Device, u ops.Update, grid [3]int, n int, p, g *Buffer, _ []*Buffer) error {
		return d.launch("optim_sgd", grid, block1, ptr(p), ptr(g), i64(n), f64(u.LR), f64(u.L2))
	}},
	"momentum": {fixed(1), func(d *Device, u ops.Update, grid [3]int, n int, p, g *Buffer, s []*Buffer) error {
		return d.launch("optim_momentum", grid, block1, ptr(p), ptr(g), ptr(s[0]), i64(n), f64(u.LR), f64(u.L2),
			f64(u.Momentum), flag(u.Nesterov))
	}},
	"adam": {fixed(2), func(d *Device, u ops.Update, grid [3]int, n int, p, g *Buffer, s []*Buffer) error {
		return d.launch("optim_adam", grid, block1, ptr(p), ptr(g), ptr(s[0]), ptr(s[1]), i64(n), f64(u.LR), f64(u.L2),
			f64(-u.Decay), f64(u.Beta1), f64(u.Beta2), f64(u.Epsilon))
	}},
	"rmsprop": {rmspropSlots,
		func(d *Device, u ops.Update, grid [3]int, n int, p, g *Buffer, s []*Buffer) error {
			var mom, mg *Buffer
			if u.Momentum > 0 {
				mom = s[1]
			}
			if u.Centered {
				mg = s[len(s)-1]
			}
			return d.launch("optim_rmsprop", grid, block1, ptr(p), ptr(g), ptr(s[0]), ptr(mom), ptr(mg), i64(n), f64(u.LR),
				f64(u.L2), f64(u.Rho), f64(u.Momentum), f64(u.Epsilon))
		}},
	"adagrad": {fixed(1), func(d *Device, u ops.Update, grid [3]int, n int, p, g *Buffer, s []*Buffer) error {
		return d.launch("optim_adagrad", grid, block1, ptr(p), ptr(g), ptr(s[0]), i64(n), f64(u.LR), f64(u.L2), f64(u.Epsilon))
	}},
}

// clip is the device's ops.ClipKernel: L2·v added into each gradient, then
// tf.clip_by_global_norm, with the norm summed in double on the device
// (kernels/optim.cu: optim_l2, sum_squares, clip_scale) and never read
// back to the host.
func clip(values, grads []*tensor.Tensor, l2, maxNorm float64) error {
	if len(grads) == 0 {
		return nil
	}
	d, ok := grads[0].Device().(*Device)
	if !ok || len(values) != len(grads) {
		return fmt.Errorf("cuda: clip of %d gradients for %d values on %s", len(grads), len(values), tensor.DeviceName(grads[0].Device()))
	}
	vs, gs := make([]*Buffer, len(grads)), make([]*Buffer, len(grads))
	for i := range grads {
		vs[i], gs[i] = view(values[i]), view(grads[i])
		if err := d.checkInputs("clip", vs[i], gs[i]); err != nil {
			return err
		}
		if vs[i].Size() != gs[i].Size() {
			return fmt.Errorf("cuda: clip: value %v with gradient %v", vs[i], gs[i])
		}
	}
	return d.do(func() error {
		normSq, err := d.newBuffer(tensor.Float64, tensor.Shape{1})
		if err != nil {
			return err
		}
		defer normSq.Free()
		if err := d.zero(normSq); err != nil {
			return err
		}
		for i, g := range gs {
			n := g.Size()
			if n == 0 {
				continue
			}
			if l2 > 0 {
				if err := d.launch("optim_l2", grid1(n), block1, ptr(g), ptr(vs[i]), i64(n), f64(l2)); err != nil {
					return err
				}
			}
			if err := d.launch("sum_squares", grid1(n), block1, ptr(g), i64(n), ptr(normSq)); err != nil {
				return err
			}
		}
		for _, g := range gs {
			if n := g.Size(); n > 0 {
				if err := d.launch("clip_scale", grid1(n), block1, ptr(g), i64(n), ptr(normSq), f64(maxNorm)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
