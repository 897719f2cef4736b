// Package graph is Plumb's define-by-run reverse-mode autodiff.
//
// A Tape records each op as it runs on Values; Backward walks the record in
// reverse and hands each op its output's gradient. Nothing is fixed ahead of
// time, so every batch may have its own shapes and sequence lengths
// (PyTorch's eager mode, Paddle's LoDTensor; Spago's ag package is the model
// for the size of this core).
//
// Errors are values (Rob Pike): an op that fails returns a Value carrying
// its error, every op given a failed Value returns a failed Value without
// computing, and the first error, naming the op and the shapes, comes out of
// Backward, Value.Tensor or Tape.Err. So model code reads like the math and
// still never panics on a user's mistake.
//
// # Concurrency
//
// A Tape is not safe for concurrent use; use one tape per goroutine.
// Parameters (Param) may be shared between goroutines for inference: many
// goroutines may run forward passes of one model at once, each on its own
// tape (NewEvalTape), since a forward pass only reads the parameters'
// values (tested under -race with Linear, Conv2D, batch norm in eval mode,
// LSTM and attention). Training one model from two goroutines at once is
// not supported and is refused rather than left to race: a Backward that
// starts while another goroutine's Backward or optimizer step holds one of
// its parameters, a forward pass (Tape.Param) that reads a parameter an
// optimizer step is updating, and a Backward whose forward pass read a
// value that a step has changed since, each fail with an error naming the
// parameter (ParamClaim is the claim an optimizer's Step holds). The check
// is made as each call starts, so a forward pass that began before another
// goroutine's step and reads the values while it runs is caught at its
// Backward, after the read: train each model on one goroutine, or give
// each goroutine its own replica (train.Replicas). The version check
// also holds on one goroutine: a tape kept across an optimizer step
// without Release (SetRetainGraph) refuses its next Backward, whose
// gradients would mix the old values with the new; Release the tape after
// each step. A Value belongs to its tape and shares its rules.
//
// # Reusing memory across steps
//
// A training loop that calls Tape.Release after each step (once the
// optimizer has stepped and the loss has been read) makes almost no garbage:
// Release gives the storage of the step's op outputs and gradients back to
// tensor's pool, where the next step's ops find tensors of the same sizes,
// and keeps the tape's own records for the next step. The rule that makes
// this safe: after Release, the values of the step are dead. Reading one
// (Tensor, Grad, Item, Shape) or passing it to an op is an error, never
// stale data. A tensor handed out before Release stays the caller's: Release
// never reuses the storage of a tensor that Value.Tensor or Value.Grad
// returned or that Detach made a constant (nor of any view sharing it), of a
// tensor given to Const, Var or BackwardWith, of a parameter, its gradient
// or an optimizer's state. What it reuses is what no caller could hold.
//
//	tape := graph.NewTape()
//	for batch := range batches {
//		loss := graph.SoftmaxCrossEntropy(net.Forward(tape.Const(batch.Images)), batch.Labels)
//		if err := tape.Backward(loss); err != nil {
//			return err
//		}
//		if err := opt.Step(); err != nil {
//			return err
//		}
//		l, _ := loss.Item()
//		tape.Release() // loss is dead from here on; l is a plain float64
//	}
package graph

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Tape records the ops of one forward pass.
type Tape struct {
	nodes    []node
	vars     []*Value // every value that takes part in backward
	params   map[*Param]*Value
	training bool
	grad     bool
	err      error
	replicas func([]float64) error // SetCrossReplica's sum, or nil
	retain   bool                  // SetRetainGraph: Backward frees nothing
	spent    bool                  // a Backward freed the step's graph
	claim    claim                 // Backward's hold on the parameters (claim.go)
	claimed  []*Param              // the parameters it holds

	// Memory that Release recycles or reuses (see the package doc).
	gen    uint64           // the step; Release moves on to the next
	values []*Value         // every value made on the tape this step
	slab   []Value          // where new values are cut from
	grads  []*tensor.Tensor // every gradient Backward made this step
	keep   []*tensor.Tensor // tensors of callers: never recycled
	moved  []*tensor.Tensor // copies Move made for this step, recycled as op outputs
	args   []*Value         // node inputs, cut per node
	tins   []*tensor.Tensor // op input tensors, cut per op call
	needs  []bool           // Backward's need flags, cut per node
	sparse map[*Value]*SparseRows
	packs  map[*Param]*packing // an inference tape's packed weights (Linear)
	rec    tensor.Recycler
	trace  TraceFunc // SetTrace's observer, or nil

	// Backward's reclaiming (see SetRetainGraph): the bytes of gradients
	// handed to rec since its last Reclaim, and how many call for one.
	dead, reclaimAt int64
}

type node struct {
	op  ops.Op
	in  []*Value
	out *Value
}

// slabSize is the number of values allocated at once. A slab is never
// reused after Release, since callers may still hold pointers to its
// (dead) values.
const slabSize = 64

// newValue returns a new value of the current step, cut from the slab.
func (t *Tape) newValue(x *tensor.Tensor) *Value {
	if t == nil { // Const on the nil tape of a failed value
		return &Value{t: x}
	}
	if len(t.slab) == cap(t.slab) {
		t.slab = make([]Value, 0, slabSize)
	}
	t.slab = append(t.slab, Value{tape: t, gen: t.gen, t: x})
	v := &t.slab[len(t.slab)-1]
	t.values = append(t.values, v)
	return v
}

// cut returns n fresh elements at the end of *arena, growing it as needed;
// earlier cuts stay valid (a grown arena leaves them in the old array).
func cut[T any](arena *[]T, n int) []T {
	a := *arena
	if len(a)+n > cap(a) {
		a = make([]T, 0, max(2*cap(a), n, 64))
	}
	s := a[len(a) : len(a)+n : len(a)+n]
	*arena = a[:len(a)+n]
	return s
}

// NewTape returns a tape in training mode that records for Backward.
func NewTape() *Tape {
	return &Tape{params: map[*Param]*Value{}, training: true, grad: true}
}

// SetRetainGraph sets whether Backward keeps what it would otherwise free
// as it goes (off by default, as PyTorch's retain_graph): with it off,
// once Backward has run an op's backward it frees that op's saved state
// (ops.Freer) and the gradient of its output, and gives the storage of
// gradients no later op reads back to the pool for the gradients still
// to come, so a step holds its activations and the gradients in flight
// rather than every gradient of the step. Values keep their tensors (a
// caller may still read the logits); leaves (Var, Param) keep their
// gradients. With it on, every value's gradient stays readable until
// Release and Backward may run again on the same step, recomputing every
// gradient; with it off, a second Backward of the step is an error.
func (t *Tape) SetRetainGraph(on bool) {
	if t != nil {
		t.retain = on
	}
}

// NewEvalTape returns a tape in inference mode (dropout off, batch norm on
// its running statistics) that records nothing for Backward.
func NewEvalTape() *Tape {
	return &Tape{params: map[*Param]*Value{}}
}

// SetCrossReplica makes the tape part of a data-parallel run: sum must
// replace its argument, on every replica, by the element-wise sum over all
// replicas (an allreduce, such as dist's). Ops whose training behaviour
// depends on the whole batch (batch norm's statistics) then compute it
// over every replica's batch, so that R replicas at batch B train as one
// process at batch R·B. nil (the default) keeps each tape on its own
// batch. train.Run sets it for a run with Replicas.
func (t *Tape) SetCrossReplica(sum func([]float64) error) { t.replicas = sum }

// CrossReplica returns the sum set by SetCrossReplica, or nil.
func (t *Tape) CrossReplica() func([]float64) error {
	if t == nil {
		return nil
	}
	return t.replicas
}

// Training reports whether layers should behave as in training.
func (t *Tape) Training() bool { return t.training }

// SetTraining switches layers between training and inference behaviour.
func (t *Tape) SetTraining(on bool) { t.training = on }

// Recording reports whether ops are recorded for Backward.
func (t *Tape) Recording() bool { return t.grad }

// SetRecording turns recording for Backward on or off (off is no-grad mode:
// values computed meanwhile have no gradient and cost no tape memory).
func (t *Tape) SetRecording(on bool) { t.grad = on }

// Err returns the first error of any op on this tape.
func (t *Tape) Err() error { return t.err }

func (t *Tape) fail(err error) *Value {
	if t == nil {
		return &Value{err: err}
	}
	if t.err == nil {
		t.err = err
	}
	return &Value{tape: t, gen: t.gen, err: err}
}

// Fail returns a failed value carrying err, for layers and helpers that
// detect a mistake before any op runs.
func (t *Tape) Fail(err error) *Value { return t.fail(err) }

// Const wraps a tensor as a value that needs no gradient.
func (t *Tape) Const(x *tensor.Tensor) *Value {
	if x == nil {
		return t.fail(errors.New("graph: Const of a nil tensor"))
	}
	v := t.newValue(x)
	v.made = t != nil && len(t.moved) > 0 && slices.Contains(t.moved, x) // a copy of the step's (Move), else kept by Release
	return v
}

// Move returns x on dev (nil: host memory) for this step: x itself when it
// is there already, else a copy that belongs to the step, so that Release
// frees it as it does the ops' outputs (unless it was handed out). It is
// how a training step moves its batch to the model's device (see
// DeviceOf); the copy may be passed to Const or to a graph function that
// takes labels or ids as a tensor.
func (t *Tape) Move(x *tensor.Tensor, dev tensor.Device) (*tensor.Tensor, error) {
	switch {
	case t == nil || x == nil:
		return nil, errors.New("graph: Move of a nil tensor or on a nil tape")
	case x.Device() == dev:
		return x, nil
	}
	c, err := x.To(dev)
	if err != nil {
		return nil, err
	}
	t.moved = append(t.moved, c)
	return c, nil
}

// Var wraps a tensor as a leaf whose gradient Backward computes; read it
// with Value.Grad.
func (t *Tape) Var(x *tensor.Tensor) *Value {
	v := t.Const(x)
	if v.err == nil && t.grad {
		if !x.DType().IsFloat() {
			return t.fail(fmt.Errorf("graph: Var of a %v tensor; only float tensors have gradients", x.DType()))
		}
		v.requiresGrad = true
		t.vars = append(t.vars, v)
	}
	return v
}

// Param returns the tape's leaf for p. Backward adds the leaf's gradient
// into p's (p.Grad, or p.SparseGrad; see Param). Repeated calls return the
// same leaf.
func (t *Tape) Param(p *Param) *Value {
	switch {
	case p == nil:
		return t.fail(errors.New("graph: Param of a nil parameter"))
	case t == nil:
		return t.fail(fmt.Errorf("graph: Param %q on a nil tape", p.Name))
	}
	if v, ok := t.params[p]; ok {
		return v
	}
	if t.params == nil { // a zero Tape{}
		t.params = map[*Param]*Value{}
	}
	version, err := p.readCheck()
	if err != nil {
		return t.fail(err)
	}
	var v *Value
	if p.Trainable {
		v = t.Var(p.Value)
	} else {
		v = t.Const(p.Value)
	}
	v.param, v.paramVersion = p, version
	t.params[p] = v
	return v
}

// apply runs op on the tape of its first non-nil input.
func apply(op ops.Op, in ...*Value) *Value {
	for _, v := range in {
		if v != nil {
			return v.tape.Apply(op, in...)
		}
	}
	return &Value{err: fmt.Errorf("%s: all inputs are nil values", op.Name())}
}

// failed returns a value carrying err on the tape of v (which may be nil).
func failed(v *Value, err error) *Value {
	if v == nil {
		return &Value{err: err}
	}
	if v.err != nil {
		return v
	}
	return v.tape.fail(err)
}

// Apply runs op on the inputs and records it for Backward. This is how
// every graph function is built; call it directly for an op that has no
// graph function of its own.
func (t *Tape) Apply(op ops.Op, in ...*Value) *Value {
	if op == nil {
		return t.fail(errors.New("graph: Apply of a nil op"))
	}
	if t == nil { // the inputs' tape: they failed before any tape, or no tape made them
		for i, v := range in {
			if err := v.Err(); err != nil {
				return &Value{err: fmt.Errorf("%s: input %d: %w", op.Name(), i, err)}
			}
		}
		return &Value{err: fmt.Errorf("%s: inputs made by no tape", op.Name())}
	}
	requires := false
	for i, v := range in {
		if v == nil {
			return t.fail(fmt.Errorf("%s: input %d is a nil value", op.Name(), i))
		}
		if v.err != nil {
			return &Value{tape: t, gen: t.gen, err: v.err}
		}
		if v.t == nil {
			return t.fail(fmt.Errorf("%s: input %d: %w", op.Name(), i, errZeroValue))
		}
		if v.tape != t {
			return t.fail(fmt.Errorf("%s: input %d belongs to another tape", op.Name(), i))
		}
		if v.gen != t.gen {
			return t.fail(fmt.Errorf("%s: input %d: %w", op.Name(), i, errReleased))
		}
		requires = requires || v.requiresGrad
	}
	ts := cut(&t.tins, len(in))
	for i, v := range in {
		ts[i] = v.t
	}
	op, err := ops.Dispatch(op, ts) // op itself for host inputs; the device's kernel otherwise
	if err != nil {
		return t.fail(err)
	}
	out, err := op.Forward(ts)
	if err != nil {
		return t.fail(err)
	}
	v := t.newValue(out)
	v.made = true
	if t.trace != nil {
		t.trace(op, ts, out)
	}
	if requires && t.grad {
		v.requiresGrad = true
		t.vars = append(t.vars, v)
		args := cut(&t.args, len(in))
		copy(args, in)
		t.nodes = append(t.nodes, node{op: op, in: args, out: v})
	} else if f, ok := op.(ops.Freer); ok { // no Backward will read a device kernel's saved state
		f.Free()
	}
	return v
}

// Backward computes the gradient of the scalar loss with respect to every
// value it depends on, and adds each parameter's gradient into its Param.
// A loss that is NaN or infinite is an error and computes nothing, so a
// diverged step (or NaN in the data) stops the loop instead of turning
// every parameter into NaN; optim's Step checks the gradients likewise.
func (t *Tape) Backward(loss *Value) error {
	if loss == nil {
		return errors.New("graph: Backward of a nil value")
	}
	if err := loss.Err(); err != nil {
		return err
	}
	if loss.tape != t || t == nil {
		return errors.New("graph: Backward of a value from another tape")
	}
	if loss.t.Size() != 1 {
		return fmt.Errorf("graph: Backward of a non-scalar of shape %v; use BackwardWith", loss.t.Shape())
	}
	if t.spent {
		return errSpent
	}
	l, err := scalar(loss.t)
	if err != nil {
		return fmt.Errorf("graph: Backward: %w", err)
	}
	if math.IsNaN(l) || math.IsInf(l, 0) {
		return fmt.Errorf("graph: Backward: the loss is %v (the step diverged, or the inputs hold NaN or Inf); no gradient was computed", l)
	}
	one, err := tensor.Full(loss.t.DType(), 1, loss.t.Shape()...)
	if err != nil {
		return err
	}
	if dev := loss.t.Device(); dev != nil { // the seed lives where the loss does
		if one, err = one.To(dev); err != nil {
			return fmt.Errorf("graph: Backward: %w", err)
		}
	}
	t.grads = append(t.grads, one)
	return t.backward(loss, one, len(t.grads))
}

// BackwardWith back-propagates a given upstream gradient g of v's shape.
// Calling it again (on this or another output) recomputes every gradient on
// the tape from scratch and adds again into the parameters' gradients.
//
// A trainable parameter's leaf that an op reads as an ops.SparseGrader
// input gets that op's gradient as rows (SparseRows), never as a dense
// tensor; if every use of the parameter on the tape is such, it gets a
// sparse gradient (Param.SparseGrad), else the rows are added into its
// dense one. The leaf's Value.Grad holds only the dense part: read a
// parameter's gradient from the Param.
func (t *Tape) BackwardWith(v *Value, g *tensor.Tensor) error {
	if v == nil || g == nil {
		return errors.New("graph: BackwardWith of a nil value or gradient")
	}
	if err := v.Err(); err != nil {
		return err
	}
	if v.tape != t || t == nil {
		return errors.New("graph: BackwardWith of a value from another tape")
	}
	if t.spent {
		return errSpent
	}
	t.keep = append(t.keep, g)
	return t.backward(v, g, 0)
}

// claimParams claims the tape's trainable parameters for its Backward
// (claim.go), all or none, and checks that no optimizer step changed
// their values after the forward pass read them: either means another
// goroutine trains the same model. releaseParams gives them back.
func (t *Tape) claimParams() error {
	ps := t.claimed[:0]
	if cap(ps) < len(t.params) { // one allocation for a fresh tape, none for a released one
		ps = make([]*Param, 0, len(t.params))
	}
	for p := range t.params {
		if p.Trainable {
			ps = append(ps, p)
		}
	}
	t.claimed = ps
	t.claim.what = "a Backward"
	if err := acquire(ps, &t.claim); err != nil {
		return err
	}
	for _, p := range ps {
		if v := t.params[p]; v.paramVersion != p.guard.version.Load() {
			t.releaseParams()
			return fmt.Errorf("graph: Backward: parameter %q was updated (by an optimizer step) after this tape's forward pass read it: "+
				"the gradients would be of values that no longer exist; step after Backward, and train one model on one goroutine", p.Name)
		}
	}
	return nil
}

// releaseParams gives back the parameters claimParams claimed.
func (t *Tape) releaseParams() {
	giveBack(t.claimed, &t.claim, false)
	clear(t.claimed)
	t.claimed = t.claimed[:0]
}

// errSpent is the error of a second Backward in a step whose first one
// freed the graph.
var errSpent = errors.New("graph: Backward a second time in one step: the first freed the ops' saved state and gradients " +
	"(call Tape.SetRetainGraph(true) before the forward pass to keep them, or Release and run the forward pass again)")

// backward is BackwardWith after its checks, and Backward's body; g is at
// gradAt in t.grads (plus one), or 0 when it is the caller's.
func (t *Tape) backward(v *Value, g *tensor.Tensor, gradAt int) error {
	if !g.Shape().Equal(v.t.Shape()) || g.DType() != v.t.DType() {
		return fmt.Errorf("graph: upstream gradient %v%v for a value %v%v", g.DType(), g.Shape(), v.t.DType(), v.t.Shape())
	}
	if !v.requiresGrad {
		return errors.New("graph: Backward of a value that depends on no parameter or Var")
	}
	if err := t.claimParams(); err != nil {
		return err
	}
	defer t.releaseParams()
	for _, x := range t.vars {
		x.grad, x.ownGrad, x.gradAt = nil, false, 0
	}
	v.grad, v.gradAt = g, gradAt
	if !t.retain {
		t.spent = true
		t.dead, t.reclaimAt = 0, reclaimThreshold(t.values)
	}
	if t.sparse == nil {
		t.sparse = map[*Value]*SparseRows{}
	}
	sparse := t.sparse // parameter leaves' sparse gradients
	clear(sparse)
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := &t.nodes[i]
		if n.out.grad == nil {
			continue
		}
		in := cut(&t.tins, len(n.in))
		need := cut(&t.needs, len(n.in))
		for j, x := range n.in {
			in[j], need[j] = x.t, x.requiresGrad
		}
		if err := t.sparseGrads(n, in, need, sparse); err != nil {
			return err
		}
		if !slices.Contains(need, true) {
			t.spend(n)
			continue
		}
		grads, err := n.op.Backward(in, n.out.t, n.out.grad, need)
		if err != nil {
			return fmt.Errorf("%s backward: %w", n.op.Name(), err)
		}
		for j, x := range n.in {
			if need[j] && grads[j] != nil {
				t.grads = append(t.grads, grads[j])
				if err := t.accumulate(x, grads[j], len(t.grads)); err != nil {
					return fmt.Errorf("%s backward: %w", n.op.Name(), err)
				}
			}
		}
		t.spend(n)
	}
	for p, x := range t.params {
		if !p.Trainable {
			continue
		}
		if x.grad != nil {
			if err := p.addGrad(x.grad); err != nil {
				return err
			}
		}
		if s := sparse[x]; s != nil {
			p.addSparse(s)
		}
	}
	return nil
}

// sparseGrads takes from n's op, if it is an ops.SparseGrader, the sparse
// gradients of the inputs that are parameter leaves, merges each into
// acc[leaf] and clears its need, so Backward does not build it densely.
func (t *Tape) sparseGrads(n *node, in []*tensor.Tensor, need []bool, acc map[*Value]*SparseRows) error {
	sg, ok := n.op.(ops.SparseGrader)
	if !ok {
		return nil
	}
	for j, x := range n.in {
		if !need[j] || x.param == nil {
			continue
		}
		rows, vals, ok := sg.SparseGrad(in, n.out.grad, j)
		if !ok {
			continue
		}
		t.keep = append(t.keep, vals) // a parameter may hold it
		s := &SparseRows{Rows: rows, Values: vals}
		if err := s.Validate(x.t); err != nil {
			return fmt.Errorf("%s sparse backward: %w", n.op.Name(), err)
		}
		if prev := acc[x]; prev != nil {
			s = mergeRows(prev, s)
		}
		t.keep = append(t.keep, s.Values) // a parameter may hold it
		acc[x], need[j] = s, false
	}
	return nil
}

// accumulate adds g into x's gradient. The first term is kept as it is;
// the second makes a fresh sum, acc + g, in one pass (vec.Sum) that
// belongs to x alone, and every later term is added into that sum in place
// (vec.Add), so a value read k times costs one new tensor and k-1 vector
// adds instead of k-1 tensors through the broadcasting add. The terms
// themselves are never written: an op's gradient may be shared by several
// values (add hands its upstream gradient to both inputs). x's sum is complete before its own op's
// Backward reads it, since every reader of x was recorded after x. On a
// device each term makes a new sum through the device's add kernel. g is
// at gAt in t.grads (plus one); a term that the sum has taken in, and a
// first term that a sum replaced, are dead unless the graph is retained.
func (t *Tape) accumulate(x *Value, g *tensor.Tensor, gAt int) error {
	switch {
	case x.grad == nil:
		x.grad, x.gradAt = g, gAt
		return nil
	case g.Storage() != nil:
		sum, err := ops.Run(ops.BinaryOp("add"), x.grad, g)
		if err != nil {
			return err
		}
		t.grads = append(t.grads, sum)
		t.free(x.gradAt)
		x.grad, x.ownGrad, x.gradAt = sum, true, len(t.grads)
		t.free(gAt)
		return nil
	}
	dst, first := x.grad, x.grad // both are gradients of x: same shape and dtype
	if !x.ownGrad {
		dst = tensor.Empty(g.DType(), g.Shape()...)
	}
	switch d := dst.Raw().(type) {
	case []float32:
		sumInto(d, first.Float32s(), g.Float32s())
	case []float64:
		sumInto(d, first.Float64s(), g.Float64s())
	}
	if !x.ownGrad {
		t.grads = append(t.grads, dst)
		t.free(x.gradAt)
		x.grad, x.ownGrad, x.gradAt = dst, true, len(t.grads)
	}
	t.free(gAt)
	return nil
}

// spend is the end of node n's part in Backward: unless the graph is
// retained, the op's saved state (a device kernel's memory, the ops.Freer
// of a CPU op) and its output's gradient are freed.
func (t *Tape) spend(n *node) {
	if t.retain {
		return
	}
	if f, ok := n.op.(ops.Freer); ok {
		f.Free()
	}
	n.op = nil // what the op saved for its backward goes to the collector
	t.free(n.out.gradAt)
	n.out.grad, n.out.gradAt, n.out.ownGrad = nil, 0, false
}

// free hands the gradient at gradAt in t.grads (plus one; 0 is none) to
// the recycler as dead, unless the graph is retained, and reclaims the
// dead gradients' storage once they come to reclaimAt bytes.
func (t *Tape) free(gradAt int) {
	if t.retain || gradAt == 0 {
		return
	}
	g := t.grads[gradAt-1]
	if g == nil {
		return
	}
	t.grads[gradAt-1] = nil
	t.rec.Add(g)
	t.dead += int64(g.Size() * g.DType().Size())
	if t.dead >= t.reclaimAt {
		t.reclaim()
	}
}

// reclaim gives the storage of the dead gradients back to the pool,
// except where a tensor the step still holds shares it: a value's tensor
// (Backward never frees those), a gradient still to be read, a tensor of
// a caller. A gradient may share the storage of another (add hands its
// upstream gradient to both inputs, reshape a view of it), so the
// recycler decides by storage, as Release does.
func (t *Tape) reclaim() {
	for _, v := range t.values {
		t.rec.Keep(v.t)
		t.rec.Keep(v.grad)
	}
	for _, k := range t.keep {
		t.rec.Keep(k)
	}
	for _, m := range t.moved {
		t.rec.Keep(m)
	}
	t.rec.Reclaim()
	t.dead = 0
}

// reclaimThreshold is how many bytes of dead gradients make Backward
// reclaim: a sixteenth of the step's values' bytes, at least 1 MiB, so
// a step reclaims a bounded number of times (each one sorts every tensor
// of the step) and a small step not at all.
func reclaimThreshold(values []*Value) int64 {
	var b int64
	for _, v := range values {
		if v.t != nil {
			b += int64(v.t.Size() * v.t.DType().Size())
		}
	}
	return max(b/16, 1<<20)
}

// scalar returns the one element of x, copied from its device if need be.
func scalar(x *tensor.Tensor) (float64, error) {
	if x.Device() == nil {
		return x.At(0), nil
	}
	h, err := x.To(nil)
	if err != nil {
		return 0, err
	}
	return h.At(0), nil
}

// errReleased is the error of a value used after its tape's Release.
var errReleased = errors.New("graph: value of a step that Tape.Release ended (or Tape.ReleaseSince)")

// Release ends the step: it gives the storage of the step's op outputs and
// gradients back to tensor's pool for the next step's ops, and empties the
// tape for the next step, keeping its mode (training, recording) and the
// memory of its records. Every value of the step is dead afterwards: its
// methods and the ops report an error naming Release. Tensors a caller was
// given (Value.Tensor, Value.Grad, Detach, and those passed to Const, Var
// and BackwardWith), parameters and their gradients are never reused; see
// the package doc. Releasing a tape that was never used does nothing.
func (t *Tape) Release() {
	for _, n := range t.nodes {
		if f, ok := n.op.(ops.Freer); ok { // a device kernel's saved state
			f.Free()
		}
	}
	for _, v := range t.values {
		switch {
		case v.kept || !v.made: // handed out, or a constant, Var or parameter
			t.rec.Keep(v.t)
		default:
			t.rec.Add(v.t)
		}
		if v.kept {
			t.rec.Keep(v.grad)
		}
	}
	for _, g := range t.grads {
		t.rec.Add(g)
	}
	for _, m := range t.moved {
		t.rec.Add(m)
	}
	for _, k := range t.keep {
		t.rec.Keep(k)
	}
	t.rec.Flush()

	t.gen++
	t.spent = false
	clear(t.nodes)
	t.nodes = t.nodes[:0]
	clear(t.vars)
	t.vars = t.vars[:0]
	clear(t.values)
	t.values = t.values[:0]
	clear(t.grads)
	t.grads = t.grads[:0]
	clear(t.keep)
	t.keep = t.keep[:0]
	clear(t.moved)
	t.moved = t.moved[:0]
	clear(t.args)
	t.args = t.args[:0]
	clear(t.tins)
	t.tins = t.tins[:0]
	t.needs = t.needs[:0]
	clear(t.sparse)
	clear(t.params)
	clear(t.packs)
	t.slab = nil
	t.err = nil
}
