// Package optim updates parameters from their gradients: SGD, Momentum
// (with Nesterov), Adam, AdamW, RMSProp and Adagrad, learning-rate
// schedules, global-norm gradient clipping and L2 regularisation.
//
// The update rules follow TensorFlow's (tf.keras 3, the version the parity
// goldens are recorded with); each constructor's doc comment gives its
// formula. Every rule runs in float32 and float64, in the parameter's own
// dtype.
//
// A training loop builds a new tape per step, calls Backward and then Step:
//
//	opt, err := optim.NewAdam(net.Params(), optim.LR(1e-3))
//	...
//	for batch := range batches {
//		tape := graph.NewTape()
//		loss := ...
//		if err := tape.Backward(loss); err != nil {
//			return err
//		}
//		if err := opt.Step(); err != nil {
//			return err
//		}
//	}
//
// Step zeroes the gradients it used, so the loop needs no separate
// ZeroGrad: Backward adds into Param.Grad, and without the zeroing every
// step would also apply the gradients of all the steps before it.
//
// Each Step works in this order, as Keras' apply does: the learning rate
// is read from the schedule at the number of steps taken so far; the L2
// term is added to each gradient (as a penalty in the loss would be); the
// gradients are clipped to the global norm; the decoupled weight decay
// shrinks each parameter (var -= lr*wd*var); the rule's update is applied;
// the gradients are zeroed and the step is counted.
//
// A parameter with a sparse gradient (graph.Param.SparseGrad: an embedding
// table after lookups) gets exactly the update of the equivalent dense
// gradient. Where that update leaves untouched rows as they are (SGD;
// Adagrad with Epsilon > 0), Step updates only the gradient's rows, so its
// cost follows the batch, not the table. Where it does not (Momentum,
// Nesterov, Adam, AdamW and RMSProp, whose slots decay on every row; any
// rule with L2 or weight decay, which touch every row), Step makes the
// gradient dense first, once: the dense buffer is kept and later
// Backwards add into it. Global-norm clipping counts a sparse gradient's
// rows, which are unique, so its norm is the dense gradient's.
//
// # Concurrency
//
// An Optimizer is not safe for concurrent use, and a model is trained from
// one goroutine: Step refuses, with an error, to run while another Step of
// the same optimizer runs, and it holds its parameters (graph.ParamClaim)
// while it updates them, so that a Backward, a forward pass or another
// optimizer's Step on the same parameters from another goroutine fails
// with an error naming the parameter instead of racing (see graph's
// package doc, Concurrency). Schedules are plain functions of the step and
// may be shared.
package optim

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Optimizer updates a fixed set of parameters from their gradients.
type Optimizer interface {
	// Step updates every trainable parameter that has a gradient, then
	// zeroes those gradients (see the package doc for why). A parameter
	// without a gradient (nil Grad and SparseGrad) is skipped, and so is one whose
	// Trainable flag is off; neither is touched. If nothing has a gradient,
	// Step does nothing and does not count a step, as Keras' apply does.
	// Step checks every parameter before it updates any, so an error leaves
	// all parameters as they were: among the checks, a gradient holding NaN
	// or Inf (a diverged step, or NaN or Inf in the data) is an error
	// naming the step and the parameter, so NaN never spreads silently
	// into the parameters.
	Step() error
	// State returns the optimizer's own tensors, each as a non-trainable
	// Param that shares storage with the optimizer, so a checkpoint can
	// save them and restore them in place: the per-parameter slots, named
	// "<param name>/<slot>" (such as "dense/kernel/m"), and the number of
	// steps taken, an int64 scalar named "iterations".
	State() []*graph.Param
}

// slot names one per-parameter state tensor and its initial value.
type slot struct {
	name string
	init float64
}

// rule is what distinguishes one optimizer from another, declared once for
// every device in its constructor: its slots, its step's coefficients and
// its CPU kernel. On a device, the same coefficients go to the device's
// fused update kernel for the rule (ops.RegisterUpdate, keyed by
// ops.Update.Rule), which follows the CPU kernel's arithmetic.
type rule struct {
	name  string
	slots []slot
	// sparse says that an element whose gradient is zero is left exactly
	// as it is, value and slots (plain SGD; Adagrad with epsilon > 0), so
	// a sparse gradient may update only its rows and still give the dense
	// update bit for bit. Rules whose slots decay on every step (momentum,
	// Adam's moments, RMSProp's mean square) take a densified gradient.
	sparse bool
	// coef returns the coefficients of step t (1-based, as TF's
	// local_step) at learning rate lr, with Rule set and L2 and Decay
	// zero: Step adds those, on a device, or applies them first, on the
	// CPU.
	coef func(lr float64, t int64) ops.Update
	// host is the rule's kernel on the CPU.
	host hostKernel
}

// optimizer runs a rule over a fixed set of parameters; it implements
// Optimizer for every constructor in this package.
type optimizer struct {
	rule   rule
	cfg    config
	params []*graph.Param    // trainable at construction
	slots  [][]*graph.Param  // slots[i] belongs to params[i]
	lrMult []float64         // lrMult[i] scales params[i]'s learning rate (ParamLR)
	iter   *graph.Param      // int64 scalar: steps taken
	active []int             // scratch: indices of params updated this step
	set    slotSet           // scratch: the slots of the parameter being updated
	coef   ops.Update        // scratch: the coefficients of the parameter being updated
	busy   atomic.Bool       // a Step runs: a second one, on another goroutine, is refused
	claim  *graph.ParamClaim // Step's hold on params
}

// newOptimizer allocates the slots of every trainable parameter in params;
// non-trainable ones are left out. An optimizer with nothing to train is
// an error: it is always a caller's mistake (a model not built, a filter
// that kept nothing), which would otherwise train nothing in silence.
func newOptimizer(params []*graph.Param, cfg config, r rule) (Optimizer, error) {
	o := &optimizer{rule: r, cfg: cfg, iter: graph.NewState("iterations", tensor.Scalar[int64](0))}
	seen := map[string]bool{}
	for i, p := range params {
		switch {
		case p == nil:
			return nil, fmt.Errorf("optim: %s: parameter %d is nil", r.name, i)
		case !p.Trainable:
			continue
		case p.Value == nil:
			return nil, fmt.Errorf("optim: %s: parameter %q has no value", r.name, p.Name)
		case !p.Value.DType().IsFloat():
			return nil, fmt.Errorf("optim: %s: parameter %q is %v; only float32 and float64 parameters are trainable", r.name, p.Name, p.Value.DType())
		case seen[p.Name]:
			return nil, fmt.Errorf("optim: %s: two parameters are named %q; slot names must be unique", r.name, p.Name)
		}
		seen[p.Name] = true
		ss := make([]*graph.Param, len(r.slots))
		for j, s := range r.slots {
			t := tensor.ZerosLike(p.Value)
			t.Fill(s.init)
			ss[j] = graph.NewState(p.Name+"/"+s.name, t)
		}
		o.params = append(o.params, p)
		o.slots = append(o.slots, ss)
		m, ok := cfg.lrMult[p.Name]
		if !ok {
			m = 1
		}
		o.lrMult = append(o.lrMult, m)
	}
	if len(o.params) == 0 {
		return nil, fmt.Errorf("optim: %s: no trainable parameters among the %d given; want at least one", r.name, len(params))
	}
	for name := range cfg.lrMult {
		if !seen[name] {
			return nil, fmt.Errorf("optim: %s: ParamLR names %q, which is not a trainable parameter of this optimizer", r.name, name)
		}
	}
	return o, nil
}

func (o *optimizer) State() []*graph.Param {
	var st []*graph.Param
	for _, ss := range o.slots {
		st = append(st, ss...)
	}
	return append(st, o.iter)
}

func (o *optimizer) Step() error {
	if !o.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("optim: %s: Step while another Step of this optimizer runs (on another goroutine): an optimizer is not safe for concurrent use; "+
			"train each model on one goroutine", o.rule.name)
	}
	defer o.busy.Store(false)
	if o.claim == nil {
		o.claim = graph.NewParamClaim("an optimizer step")
	}
	if err := o.claim.Acquire(o.params); err != nil {
		return fmt.Errorf("optim: %s: %w", o.rule.name, err)
	}
	defer o.claim.Release(o.params)
	return o.step()
}

// step is Step's body, run while it holds the optimizer and its
// parameters.
func (o *optimizer) step() error {
	o.active = o.active[:0]
	for i, p := range o.params {
		if !p.Trainable || (p.Grad == nil && p.SparseGrad == nil) {
			continue
		}
		if err := o.check(i); err != nil {
			return err
		}
		o.active = append(o.active, i)
	}
	if len(o.active) == 0 {
		return nil
	}
	it := o.iter.Value
	if it == nil || it.DType() != tensor.Int64 || it.Size() != 1 {
		return fmt.Errorf("optim: %s: the iterations state must be one int64", o.rule.name)
	}
	done := it.Int64s()[0]
	if done < 0 || done == math.MaxInt64 {
		return fmt.Errorf("optim: %s: iteration count %d out of range", o.rule.name, done)
	}
	lr := o.cfg.lr.LR(done)
	if !(lr >= 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("optim: %s: learning rate schedule gave %v at step %d; want a finite value >= 0", o.rule.name, lr, done)
	}
	dev, err := o.device()
	if err != nil {
		return err
	}
	if dev != nil {
		return o.stepDevice(dev, done, lr)
	}
	for _, i := range o.active {
		if name, ok := finiteGrad(o.params[i]); !ok {
			return fmt.Errorf("optim: %s: step %d: the gradient of %q holds NaN or Inf (the loss diverged, or the inputs hold NaN or Inf); no parameter was updated",
				o.rule.name, done+1, name)
		}
	}
	// L2 and weight decay change every row, so with either of them, as
	// with a rule that is not sparse, a sparse gradient is made dense.
	keepSparse := o.rule.sparse && o.cfg.l2 == 0 && o.cfg.weightDecay == 0
	if !keepSparse {
		for _, i := range o.active {
			densify(o.params[i])
		}
	}
	if o.cfg.l2 > 0 {
		for _, i := range o.active {
			axpy(o.cfg.l2, o.params[i].Value, o.params[i].Grad)
		}
	}
	if o.cfg.clipNorm > 0 {
		ps := make([]*graph.Param, len(o.active))
		for k, i := range o.active {
			ps[k] = o.params[i]
		}
		clipGlobalNorm(ps, o.cfg.clipNorm)
	}
	if o.cfg.weightDecay > 0 {
		for _, i := range o.active {
			axpy(-lr*o.lrMult[i]*o.cfg.weightDecay, o.params[i].Value, o.params[i].Value)
		}
	}
	u1 := o.rule.coef(lr, done+1)
	s, u := &o.set, &o.coef
	for _, i := range o.active {
		p := o.params[i]
		*u = u1
		if m := o.lrMult[i]; m != 1 {
			*u = o.rule.coef(lr*m, done+1)
		}
		s.t = s.t[:0]
		for _, sp := range o.slots[i] {
			s.t = append(s.t, sp.Value)
		}
		switch {
		case p.SparseGrad == nil:
			o.rule.host.run(u, p.Value, p.Grad, nil, s)
		case len(p.SparseGrad.Rows) > 0:
			o.rule.host.run(u, p.Value, p.SparseGrad.Values, p.SparseGrad.Rows, s)
		}
		p.ZeroGrad()
	}
	it.Int64s()[0] = done + 1
	return nil
}

// finiteGrad reports whether p's gradient (dense, or a sparse one's rows)
// holds only finite numbers, and p's name. A float32 gradient is summed in
// float64 with the vector kernel, where a NaN or an infinity survives and
// finite float32 values cannot overflow; a float64 one is scanned. The
// check costs one read of the gradients per step.
func finiteGrad(p *graph.Param) (string, bool) {
	g := p.Grad
	if p.SparseGrad != nil {
		g = p.SparseGrad.Values
	}
	if g == nil {
		return p.Name, true
	}
	switch d := g.Raw().(type) {
	case []float32:
		s := vec.SumF64(d)
		return p.Name, !math.IsNaN(s) && !math.IsInf(s, 0)
	case []float64:
		for _, x := range d {
			if x-x != 0 { // NaN for NaN and ±Inf, else 0
				return p.Name, false
			}
		}
	}
	return p.Name, true
}

// densify makes p's gradient dense, as the dense update needs it. The new
// dense gradient is kept, so ZeroGrad keeps its buffer and later Backwards
// add into it rather than allocate: under a rule that densifies anyway,
// the parameter's gradient stays dense. p was validated by check.
func densify(p *graph.Param) {
	if p.SparseGrad == nil {
		return
	}
	g, _ := p.DenseGrad() // check validated the sparse gradient
	p.Grad, p.SparseGrad = g, nil
}

// check validates parameter i before Step touches anything: its gradient
// and slots must match its value's dtype and shape (a value replaced since
// construction, or a slot filled from a wrong checkpoint, would not).
func (o *optimizer) check(i int) error {
	p := o.params[i]
	if p.Value == nil {
		return fmt.Errorf("optim: %s: parameter %q has no value", o.rule.name, p.Name)
	}
	var errs []error // only a failing check allocates
	switch {
	case p.SparseGrad == nil:
		if err := o.fits(p, "", p.Grad); err != nil {
			errs = append(errs, err)
		}
	case p.Grad != nil:
		errs = append(errs, fmt.Errorf("optim: %s: parameter %q has both a dense and a sparse gradient", o.rule.name, p.Name))
	default:
		if err := p.SparseGrad.Validate(p.Value); err != nil {
			errs = append(errs, fmt.Errorf("optim: %s: parameter %q: %w", o.rule.name, p.Name, err))
		}
	}
	for _, s := range o.slots[i] {
		if err := o.fits(p, s.Name, s.Value); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// fits checks that t, p's gradient (slot "") or its slot named slot,
// matches p's value in dtype and shape.
func (o *optimizer) fits(p *graph.Param, slot string, t *tensor.Tensor) error {
	if t == nil {
		return fmt.Errorf("optim: %s: parameter %q has no %s tensor", o.rule.name, p.Name, tensorName(slot))
	}
	if t.DType() != p.Value.DType() || !tensor.SameShape(t, p.Value) {
		return fmt.Errorf("optim: %s: parameter %q is %v%v but its %s is %v%v",
			o.rule.name, p.Name, p.Value.DType(), p.Value.Shape(), tensorName(slot), t.DType(), t.Shape())
	}
	return nil
}

// tensorName names the gradient (slot "") or a slot in fits' errors.
func tensorName(slot string) string {
	if slot == "" {
		return "gradient"
	}
	return "slot " + slot
}
