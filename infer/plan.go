package infer

import (
	"errors"
	"fmt"
	"sync"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// step is one op of a compiled plan.
type step struct {
	op   ops.Op
	into ops.Into // op's ForwardInto, or nil: the op is rebuilt and run by Forward, its output copied
	in   []Ref
	out  Ref
	view bool // out is a reshape of in[0]: no work, the arena's tensor is a view
}

// Plan is a compiled Graph: steps in order, every intermediate in a slot
// of one arena, constants shared. Run is safe for concurrent use: each
// call takes an arena of its own from the plan's free list (the weights
// are only read), and once the list holds an arena a call whose ops all
// have ForwardInto allocates nothing.
type Plan struct {
	values  []value
	steps   []step
	inputs  []Ref
	outputs []Ref
	mem     slotPlan
	mu      sync.Mutex
	free    []*arena // arenas no call holds (get, put)
	before  *Graph   // the graph as traced, for Explain
	after   *Graph   // the graph after the passes
	passes  []string // what each pass did, for Explain
}

// arena is one call's memory: the buffers and, made once, a tensor per
// value (views into the buffers, the constants, the bound inputs) and each
// step's input list.
type arena struct {
	f32 []float32
	f64 []float64
	t   []*tensor.Tensor
	ins [][]*tensor.Tensor
}

// Options choose what Compile does.
type Options struct {
	// NoFusion compiles the graph as traced, with no pass; the memory plan
	// and prepacking still apply.
	NoFusion bool
	// Dynamic, when set, quantizes the linear layers to int8 with
	// run-time activation ranges (DynamicQuant); nil keeps float32.
	Dynamic *DynamicQuant
}

// Compile turns g into a Plan: the fusion passes (unless opts.NoFusion),
// batch norm lowered to a per-channel scale and shift, linear weights
// packed for the GEMM once, and the memory plan.
func (g *Graph) Compile(opts Options) (*Plan, error) {
	if g == nil || len(g.outputs) == 0 {
		return nil, errors.New("infer: Compile of an empty graph")
	}
	p := &Plan{before: g}
	h := g.clone()
	for _, pass := range passes(opts) {
		n, err := pass.run(h)
		if err != nil {
			return nil, fmt.Errorf("infer: pass %s: %w", pass.name, err)
		}
		if n > 0 {
			p.passes = append(p.passes, fmt.Sprintf("%s: %d", pass.name, n))
		}
	}
	h = h.pruned()
	p.after = h
	p.values, p.inputs, p.outputs = h.values, h.inputs, h.outputs
	for _, n := range h.nodes {
		s := step{op: n.op, in: n.in, out: n.out}
		if n.op.Name() == "reshape" && h.values[n.in[0]].kind == kindOp && arenaType(h.values[n.out].dt) {
			s.view = true
		} else if in, ok := n.op.(ops.Into); ok {
			s.into = in
		} else if _, err := rebuild(n.op); err != nil {
			return nil, fmt.Errorf("infer: op %s has no ForwardInto and cannot be rebuilt for each call: %w", n.op.Name(), err)
		}
		p.steps = append(p.steps, s)
	}
	p.mem = planMemory(p.values, p.steps, p.outputs)
	// A first call checks the plan end to end on zeros.
	a := p.newArena()
	zeros := make([]*tensor.Tensor, len(p.inputs))
	for i, r := range p.inputs {
		zeros[i] = tensor.Zeros(p.values[r].dt, p.values[r].shape...)
	}
	p.bind(a, zeros)
	err := p.exec(a)
	p.bind(a, nil)
	if err != nil {
		return nil, err
	}
	p.put(a)
	return p, nil
}

// get takes a free arena, or makes one when every arena is in use. The
// arenas are kept in a free list rather than a sync.Pool, which drops its
// contents at every second garbage collection: a plan keeps as many arenas
// as calls ever ran on it at once, and a call after a collection finds its
// arena still there instead of allocating a new one.
func (p *Plan) get() *arena {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		a := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return a
	}
	p.mu.Unlock()
	return p.newArena()
}

// put gives a back to the free list.
func (p *Plan) put(a *arena) {
	p.mu.Lock()
	p.free = append(p.free, a)
	p.mu.Unlock()
}

// newArena makes one call's arena.
func (p *Plan) newArena() *arena {
	a := &arena{f32: make([]float32, p.mem.f32), f64: make([]float64, p.mem.f64), t: make([]*tensor.Tensor, len(p.values))}
	for i, v := range p.values {
		switch {
		case v.kind == kindConst:
			a.t[i] = v.c
		case v.kind == kindInput:
		case p.mem.inArn[i]:
			a.t[i] = p.slice(a, i)
		case p.mem.root[i] == i: // an op's output outside the arena (integer dtypes)
			a.t[i] = tensor.Zeros(v.dt, v.shape...)
		}
	}
	for _, s := range p.steps { // views, in order, so a view of a view finds its source
		if s.view {
			src := a.t[s.in[0]]
			a.t[s.out], _ = src.Reshape(p.values[s.out].shape...) // sizes checked by the traced reshape
		}
	}
	a.ins = make([][]*tensor.Tensor, len(p.steps))
	for si, s := range p.steps {
		a.ins[si] = make([]*tensor.Tensor, len(s.in))
		for j, r := range s.in {
			a.ins[si][j] = a.t[r]
		}
	}
	return a
}

// slice returns the arena's tensor for value i, a view of its slot.
func (p *Plan) slice(a *arena, i int) *tensor.Tensor {
	v, off := p.values[i], p.mem.off[i]
	n := v.shape.Size()
	var t *tensor.Tensor
	switch v.dt {
	case tensor.Float32:
		t, _ = tensor.FromSlice(a.f32[off:off+n:off+n], v.shape...)
	case tensor.Float64:
		t, _ = tensor.FromSlice(a.f64[off:off+n:off+n], v.shape...)
	}
	return t
}

// compiled reports whether Compile made p (not a nil or zero Plan).
func (p *Plan) compiled() bool { return p != nil && p.after != nil }

// Inputs returns the dtypes and shapes the plan takes, in order.
func (p *Plan) Inputs() []Signature {
	if !p.compiled() {
		return nil
	}
	return p.after.Inputs()
}

// Outputs returns the dtypes and shapes of the plan's outputs, in order.
func (p *Plan) Outputs() []Signature {
	if !p.compiled() {
		return nil
	}
	return signatures(p.values, p.outputs)
}

// Run computes the plan's first output on in (of the signature Inputs
// gives) into out, a tensor of the output's dtype and shape that the
// caller owns. It allocates nothing of its own once the plan holds a free arena, when
// every step has ForwardInto.
func (p *Plan) Run(out *tensor.Tensor, in ...*tensor.Tensor) error {
	if !p.compiled() {
		return errors.New("infer: Run of a plan Compile did not make")
	}
	if err := p.checkInputs(in); err != nil {
		return err
	}
	o := p.values[p.outputs[0]]
	if !sameSig(out, o.dt, o.shape) {
		if out == nil {
			return errors.New("infer: Run into a nil output")
		}
		return fmt.Errorf("infer: Run into an output %v%v; want a host tensor %v%v", out.DType(), out.Shape(), o.dt, o.shape)
	}
	a := p.get()
	p.bind(a, in)
	err := p.exec(a)
	if err == nil {
		err = out.CopyFrom(a.t[p.outputs[0]])
	}
	p.bind(a, nil)
	p.put(a)
	return err
}

// Forward returns the plan's outputs on in, as new tensors.
func (p *Plan) Forward(in ...*tensor.Tensor) ([]*tensor.Tensor, error) {
	if !p.compiled() {
		return nil, errors.New("infer: Forward of a plan Compile did not make")
	}
	if err := p.checkInputs(in); err != nil {
		return nil, err
	}
	a := p.get()
	defer p.put(a)
	p.bind(a, in)
	defer p.bind(a, nil)
	if err := p.exec(a); err != nil {
		return nil, err
	}
	outs := make([]*tensor.Tensor, len(p.outputs))
	for i, r := range p.outputs {
		outs[i] = a.t[r].Clone()
	}
	return outs, nil
}

func (p *Plan) checkInputs(in []*tensor.Tensor) error {
	if len(in) != len(p.inputs) {
		return fmt.Errorf("infer: Run with %d inputs; the plan takes %d (%v)", len(in), len(p.inputs), p.Inputs())
	}
	for i, r := range p.inputs {
		v := p.values[r]
		if !sameSig(in[i], v.dt, v.shape) {
			if in[i] == nil {
				return fmt.Errorf("infer: input %d is nil", i)
			}
			return fmt.Errorf("infer: input %d is %v%v; the plan was compiled for a host tensor %v%v (compile a plan per shape; see Cache)", i, in[i].DType(), in[i].Shape(), v.dt, v.shape)
		}
	}
	return nil
}

func sameSig(t *tensor.Tensor, dt tensor.DType, shape tensor.Shape) bool {
	if t == nil || t.DType() != dt || t.Rank() != len(shape) || t.Storage() != nil {
		return false
	}
	for i, d := range shape {
		if t.Dim(i) != d {
			return false
		}
	}
	return true
}

// bind points the arena's step inputs at the call's inputs (nil: unbind,
// so a free arena keeps no caller's tensor alive).
func (p *Plan) bind(a *arena, in []*tensor.Tensor) {
	for i, r := range p.inputs {
		var t *tensor.Tensor
		if in != nil {
			t = in[i]
		}
		a.t[r] = t
		for si, s := range p.steps {
			for j, x := range s.in {
				if x == r {
					a.ins[si][j] = t
				}
			}
		}
	}
}

// exec runs the steps on a bound arena.
func (p *Plan) exec(a *arena) error {
	for si, s := range p.steps {
		switch {
		case s.view:
		case s.into != nil:
			if err := s.into.ForwardInto(a.t[s.out], a.ins[si]); err != nil {
				return fmt.Errorf("infer: step %d: %w", si, err)
			}
		default:
			if err := p.fallback(s, a.t[s.out], a.ins[si]); err != nil {
				return fmt.Errorf("infer: step %d: %w", si, err)
			}
		}
	}
	return nil
}

// fallback runs an op without ForwardInto: a fresh op from its attributes
// (an Op value serves one Forward), its output copied into the arena.
func (p *Plan) fallback(s step, out *tensor.Tensor, in []*tensor.Tensor) error {
	op, err := rebuild(s.op)
	if err != nil {
		return err
	}
	y, err := op.Forward(in)
	if err != nil {
		return err
	}
	if f, ok := op.(ops.Freer); ok {
		f.Free()
	}
	return out.CopyFrom(y)
}

// rebuild returns a fresh op like op, from its typed attributes
// (ops.Attributed) or, for an op of the registry that has none, from its
// Spec alone.
func rebuild(op ops.Op) (ops.Op, error) {
	spec, ok := ops.Lookup(op.Name())
	if !ok {
		return nil, fmt.Errorf("op %s is not registered", op.Name())
	}
	if at, ok := op.(ops.Attributed); ok {
		return spec.Make.Make(at.Attrs())
	}
	if _, none := spec.Make.Attrs().(ops.NoAttrs); none {
		return spec.Make.Make(ops.NoAttrs{})
	}
	return nil, fmt.Errorf("op %s has attributes but no Attrs method", op.Name())
}
