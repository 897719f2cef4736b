//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"math"

	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"gorgonia.org/cu"
)

// OptimRule is one of package optim's update rules.
type OptimRule int

// The rules of package optim, with TensorFlow's formulas (see each
// constructor there: optim.NewSGD, NewMomentum, NewAdam, NewAdamW,
// NewRMSProp, NewAdagrad).
const (
	SGD OptimRule = iota
	Momentum
	Adam
	AdamW
	RMSProp
	Adagrad
)

func (r OptimRule) String() string {
	switch r {
	case SGD:
		return "SGD"
	case Momentum:
		return "Momentum"
	case Adam:
		return "Adam"
	case AdamW:
		return "AdamW"
	case RMSProp:
		return "RMSProp"
	case Adagrad:
		return "Adagrad"
	}
	return fmt.Sprintf("OptimRule(%d)", int(r))
}

// OptimConfig is an optimizer's rule and hyperparameters, the options of
// package optim. Start from DefaultOptimConfig, which holds Keras'
// defaults as optim's constructors do, and change what differs.
type OptimConfig struct {
	Rule OptimRule
	// LR gives the learning rate at each step (optim.Constant for a fixed
	// one), read at the number of steps taken before, as optim does.
	LR                 optim.Schedule
	Beta1, Beta2       float64 // Adam, AdamW
	Epsilon            float64 // Adam, AdamW, RMSProp, Adagrad
	Momentum           float64 // Momentum, RMSProp
	Nesterov           bool    // Momentum
	Rho                float64 // RMSProp
	Centered           bool    // RMSProp
	InitialAccumulator float64 // Adagrad
	WeightDecay        float64 // Adam, AdamW: decoupled, var -= lr·wd·var
	L2                 float64 // every rule: g += l2·var before the update
	// GlobalClipNorm, when > 0, clips each step's gradients (with the L2
	// term) to that global norm, as optim.GlobalClipNorm and
	// tf.clip_by_global_norm.
	GlobalClipNorm float64
}

// DefaultOptimConfig returns rule's defaults in package optim (Keras'):
// learning rate 0.01 for SGD and Momentum, else 0.001; momentum 0.9;
// Adam's betas 0.9 and 0.999; epsilon 1e-7; RMSProp's rho 0.9; Adagrad's
// initial accumulator 0.1; AdamW's weight decay 0.004.
func DefaultOptimConfig(rule OptimRule) OptimConfig {
	c := OptimConfig{Rule: rule, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-7, Rho: 0.9, InitialAccumulator: 0.1}
	lr := 0.001
	switch rule {
	case SGD:
		lr = 0.01
	case Momentum:
		lr, c.Momentum = 0.01, 0.9
	case AdamW:
		c.WeightDecay = 0.004
	}
	c.LR, _ = optim.Constant(lr)
	return c
}

// check validates c as optim's options do.
func (c OptimConfig) check() error {
	var errs []error
	in := func(name string, x, lo, hi float64, hiOpen bool) {
		if !(x >= lo) || x > hi || (hiOpen && x == hi) || math.IsNaN(x) {
			errs = append(errs, fmt.Errorf("%s %v: want a value in [%v, %v%s", name, x, lo, hi, map[bool]string{true: ")", false: "]"}[hiOpen]))
		}
	}
	if c.LR == nil {
		errs = append(errs, errors.New("nil learning rate schedule"))
	}
	inf := math.Inf(1)
	switch c.Rule {
	case SGD:
	case Momentum:
		in("Momentum", c.Momentum, 0, inf, true)
	case Adam, AdamW:
		in("Beta1", c.Beta1, 0, 1, true)
		in("Beta2", c.Beta2, 0, 1, true)
		in("Epsilon", c.Epsilon, 0, inf, true)
		in("WeightDecay", c.WeightDecay, 0, inf, true)
	case RMSProp:
		in("Rho", c.Rho, 0, 1, true)
		in("Momentum", c.Momentum, 0, inf, true)
		in("Epsilon", c.Epsilon, 0, inf, true)
	case Adagrad:
		in("InitialAccumulator", c.InitialAccumulator, 0, inf, true)
		in("Epsilon", c.Epsilon, 0, inf, true)
	default:
		errs = append(errs, fmt.Errorf("unknown rule %v", c.Rule))
	}
	in("L2", c.L2, 0, inf, true)
	in("GlobalClipNorm", c.GlobalClipNorm, 0, inf, true)
	if c.WeightDecay != 0 && c.Rule != Adam && c.Rule != AdamW {
		errs = append(errs, fmt.Errorf("WeightDecay %v: only Adam and AdamW take it", c.WeightDecay))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cuda: optimizer %v: %w", c.Rule, err)
	}
	return nil
}

// slotNames are the rule's per-parameter state tensors in optim's order
// and names, with their initial values.
func (c OptimConfig) slotNames() (names []string, init []float64) {
	switch c.Rule {
	case Momentum:
		return []string{"momentum"}, []float64{0}
	case Adam, AdamW:
		return []string{"m", "v"}, []float64{0, 0}
	case RMSProp:
		names, init = []string{"ms"}, []float64{0}
		if c.Momentum > 0 {
			names, init = append(names, "mom"), append(init, 0)
		}
		if c.Centered {
			names, init = append(names, "mg"), append(init, 0)
		}
		return names, init
	case Adagrad:
		return []string{"accumulator"}, []float64{c.InitialAccumulator}
	}
	return nil, nil
}

// Optimizer updates float32 parameters in device memory in place from
// their gradients, with the rules of package optim and the same order of
// work per step: the learning rate from the schedule at the steps taken
// so far, the L2 term added to each gradient, the gradients clipped to
// the global norm, AdamW's decoupled decay, then the rule's update. Its
// slots live on the device beside the parameters.
type Optimizer struct {
	d      *Device
	cfg    OptimConfig
	params []*Buffer
	slots  [][]*Buffer // slots[i] belongs to params[i], in SlotNames order
	normSq *Buffer     // float64 [1]: Σ g² for clipping
	iter   int64
}

// NewOptimizer returns an optimizer over params (float32 buffers of d,
// which it keeps and updates) with the rule and hyperparameters of cfg,
// its slots allocated on the device at their initial values.
func (d *Device) NewOptimizer(params []*Buffer, cfg OptimConfig) (*Optimizer, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	for i, p := range params {
		if err := d.checkInputs("optimizer", p); err != nil {
			return nil, fmt.Errorf("cuda: optimizer %v: parameter %d: %w", cfg.Rule, i, err)
		}
	}
	o := &Optimizer{d: d, cfg: cfg, params: append([]*Buffer(nil), params...)}
	_, init := cfg.slotNames()
	err := d.do(func() error {
		if cfg.GlobalClipNorm > 0 {
			var err error
			if o.normSq, err = d.newBuffer(tensor.Float64, tensor.Shape{1}); err != nil {
				return err
			}
		}
		for _, p := range params {
			ss := make([]*Buffer, len(init))
			o.slots = append(o.slots, ss)
			for j, v := range init {
				var err error
				if ss[j], err = d.newBuffer(tensor.Float32, p.shape); err != nil {
					return err
				}
				if err := d.fill(ss[j], float32(v)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		o.Free()
		return nil, err
	}
	return o, nil
}

// fill sets every element of the float32 buffer b to v; called inside do.
func (d *Device) fill(b *Buffer, v float32) error {
	if b.bytes() == 0 {
		return nil
	}
	if err := cu.MemsetD32Async(cu.DevicePtr(b.ptr), uint(math.Float32bits(v)), int64(b.Size()), d.stream); err != nil {
		return &Error{Call: "cuMemsetD32Async", Detail: fmt.Sprintf("%v at 0x%x", b, b.ptr), Err: err}
	}
	return nil
}

// SlotNames returns the names of each parameter's slots, as optim names
// them ("m" and "v" for Adam).
func (o *Optimizer) SlotNames() []string {
	names, _ := o.cfg.slotNames()
	return names
}

// Slots returns parameter i's slots in SlotNames order; the caller must
// not free them.
func (o *Optimizer) Slots(i int) []*Buffer { return o.slots[i] }

// Iterations returns the number of steps taken.
func (o *Optimizer) Iterations() int64 { return o.iter }

// Step applies one update to every parameter from grads, one float32
// buffer of each parameter's shape, in the order of the parameters. With
// GlobalClipNorm, it adds the L2 term to the gradient buffers and scales
// them in place, as optim does to Param.Grad.
func (o *Optimizer) Step(grads []*Buffer) error {
	if len(grads) != len(o.params) {
		return fmt.Errorf("cuda: optimizer %v: %d gradients for %d parameters", o.cfg.Rule, len(grads), len(o.params))
	}
	for i, g := range grads {
		p := o.params[i]
		if err := o.d.checkInputs("optimizer", p, g); err != nil {
			return fmt.Errorf("cuda: optimizer %v: parameter %d: %w", o.cfg.Rule, i, err)
		}
		if !g.shape.Equal(p.shape) {
			return fmt.Errorf("cuda: optimizer %v: parameter %d is %v but its gradient is %v", o.cfg.Rule, i, p, g)
		}
	}
	return o.d.do(func() error { return o.step(grads) })
}

// step launches one update of every parameter on validated gradients;
// called inside do.
func (o *Optimizer) step(grads []*Buffer) error {
	c := o.cfg
	if o.iter == math.MaxInt64 {
		return fmt.Errorf("cuda: optimizer %v: iteration count %d out of range", c.Rule, o.iter)
	}
	lr := c.LR.LR(o.iter)
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("cuda: optimizer %v: learning rate schedule gave %v at step %d; want a finite value >= 0", c.Rule, lr, o.iter)
	}
	l2 := c.L2
	if c.GlobalClipNorm > 0 {
		if err := o.clip(grads); err != nil {
			return err
		}
		l2 = 0 // already in the gradients
	}
	t := float64(o.iter + 1)
	for i, p := range o.params {
		n, g, s := p.Size(), grads[i], o.slots[i]
		if n == 0 {
			continue
		}
		grid := grid1(n)
		var err error
		switch c.Rule {
		case SGD:
			err = o.d.launch("optim_sgd", grid, block1, ptr(p), ptr(g), i64(n), f64(lr), f64(l2))
		case Momentum:
			err = o.d.launch("optim_momentum", grid, block1, ptr(p), ptr(g), ptr(s[0]), i64(n), f64(lr), f64(l2),
				f64(c.Momentum), flag(c.Nesterov))
		case Adam, AdamW:
			lrT := lr * math.Sqrt(1-math.Pow(c.Beta2, t)) / (1 - math.Pow(c.Beta1, t))
			err = o.d.launch("optim_adam", grid, block1, ptr(p), ptr(g), ptr(s[0]), ptr(s[1]), i64(n), f64(lrT), f64(l2),
				f64(-lr*c.WeightDecay), f64(c.Beta1), f64(c.Beta2), f64(c.Epsilon))
		case RMSProp:
			var mom, mg *Buffer
			k := 1
			if c.Momentum > 0 {
				mom, k = s[k], k+1
			}
			if c.Centered {
				mg = s[k]
			}
			err = o.d.launch("optim_rmsprop", grid, block1, ptr(p), ptr(g), ptr(s[0]), ptr(mom), ptr(mg), i64(n), f64(lr),
				f64(l2), f64(c.Rho), f64(c.Momentum), f64(c.Epsilon))
		case Adagrad:
			err = o.d.launch("optim_adagrad", grid, block1, ptr(p), ptr(g), ptr(s[0]), i64(n), f64(lr), f64(l2), f64(c.Epsilon))
		}
		if err != nil {
			return err
		}
	}
	o.iter++
	return nil
}

// clip adds the L2 term to the gradients in place, sums their squares on
// the device and scales them to the global norm; called inside do.
func (o *Optimizer) clip(grads []*Buffer) error {
	d, c := o.d, o.cfg
	if err := d.zero(o.normSq); err != nil {
		return err
	}
	for i, p := range o.params {
		n := p.Size()
		if n == 0 {
			continue
		}
		if c.L2 > 0 {
			if err := d.launch("optim_l2", grid1(n), block1, ptr(grads[i]), ptr(p), i64(n), f64(c.L2)); err != nil {
				return err
			}
		}
		if err := d.launch("sum_squares", grid1(n), block1, ptr(grads[i]), i64(n), ptr(o.normSq)); err != nil {
			return err
		}
	}
	for i, p := range o.params {
		if n := p.Size(); n > 0 {
			if err := d.launch("clip_scale", grid1(n), block1, ptr(grads[i]), i64(n), ptr(o.normSq), f64(c.GlobalClipNorm)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Free releases the slots; the parameters stay the caller's.
func (o *Optimizer) Free() {
	for _, ss := range o.slots {
		freeAll(ss...)
	}
	freeAll(o.normSq)
	o.slots, o.normSq = nil, nil
}
