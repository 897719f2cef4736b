package run

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A Model runs on one of two paths. For each input signature (the dims
// of every graph input) it compiles the graph again with those dims
// fixed, so that every shape computation folds into a constant, and
// builds an infer.Graph from what is left (infer.Builder: each node
// lowered by its op's lowerFn onto Plumb ops), compiled into an
// infer.Plan: batch norm folded, packed conv and linear weights, bias,
// residual and activation epilogues, one arena per call (see
// ARCHITECTURE.md, "The inference plan"). A signature whose graph keeps a
// node no lowerFn expresses (an op with no plan form, a shape computed
// from run-time values) runs on the interpreter: the steps of Compile's
// graph, one kernel each. Explain says which path a signature takes and
// why.

// lowerFn adds one node to a plan's graph: in holds a Ref per input of the
// node (-1 for an absent optional one; constants are added as Consts), and
// it returns a Ref per output. It reads the node's attributes and the
// inputs' compile-time values from the compile that made it.
type lowerFn func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error)

// maxPlans is how many signatures' plans (or reasons for having none) a
// Model keeps; the least recently used goes first.
const maxPlans = 8

// planCache holds a Model's plans by input signature. A plan is compiled
// outside the lock: callers of other signatures do not wait, and two
// callers of a new signature may both compile it (the second's is kept).
type planCache struct {
	mu      sync.Mutex
	entries []*planEntry // most recently used last
}

// planEntry is one signature's plan, or why it has none.
type planEntry struct {
	dims [][]int
	plan *infer.Plan
	why  error
}

func (e *planEntry) matches(in []*tensor.Tensor) bool {
	if len(e.dims) != len(in) {
		return false
	}
	for i, d := range e.dims {
		if !in[i].Shape().Equal(tensor.Shape(d)) {
			return false
		}
	}
	return true
}

// entry returns the plan entry of in's signature, compiling it on first
// use.
func (m *Model) entry(in []*tensor.Tensor) *planEntry {
	c := m.plans
	c.mu.Lock()
	for i := len(c.entries) - 1; i >= 0; i-- {
		if e := c.entries[i]; e.matches(in) {
			copy(c.entries[i:], c.entries[i+1:])
			c.entries[len(c.entries)-1] = e
			c.mu.Unlock()
			return e
		}
	}
	c.mu.Unlock()
	e := &planEntry{dims: make([][]int, len(in))}
	for i, t := range in {
		e.dims[i] = []int(t.Shape().Clone())
	}
	e.plan, e.why = m.buildPlan(e.dims)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) == maxPlans {
		c.entries = append(c.entries[:0], c.entries[1:]...)
	}
	c.entries = append(c.entries, e)
	return e
}

// buildPlan compiles the graph for inputs of dims (in the order of the
// graph's inputs), lowers every step left onto an infer.Builder and
// compiles the plan. The error says which node keeps the graph off the
// plan.
func (m *Model) buildPlan(dims [][]int) (*infer.Plan, error) {
	if m.src == nil {
		return nil, errors.New("the model was not compiled from an onnx.Model")
	}
	fixed := make(map[string][]int, len(m.inputs))
	for i, p := range m.inputs {
		fixed[p.name] = dims[i]
	}
	c := &compiler{model: &Model{opset: m.opset}, slots: map[string]int{}, opsets: m.opsets, fixed: fixed}
	fm, err := c.compile(m.src.Graph)
	if err != nil {
		return nil, err
	}
	// A node without a plan form sends the signature to the interpreter:
	// look before the builder runs any op on example inputs.
	for _, st := range fm.steps {
		if st.lower == nil {
			return nil, noPlanForm(st)
		}
	}
	b := infer.NewBuilder()
	refs := make([]infer.Ref, fm.nslots)
	for i := range refs {
		refs[i] = -1
	}
	for i, p := range fm.inputs {
		dt, _ := runtimeDType(p.elem)
		refs[p.slot] = b.Input(dt, dims[i]...)
	}
	ref := func(s int) infer.Ref {
		if refs[s] < 0 && fm.consts[s] != nil {
			refs[s] = b.Const(fm.consts[s])
		}
		return refs[s]
	}
	readers := make([][]int, fm.nslots)
	for i, st := range fm.steps {
		for _, s := range st.in {
			if s >= 0 {
				readers[s] = append(readers[s], i)
			}
		}
	}
	skip := make([]bool, len(fm.steps))
	for i, st := range fm.steps {
		if skip[i] {
			continue
		}
		if act, last, dead, ok := fuseConvAct(fm, i, readers); ok {
			args := make([]infer.Ref, 0, 3)
			for _, s := range st.in {
				if s >= 0 {
					args = append(args, ref(s))
				}
			}
			refs[fm.steps[last].out[0]] = b.Op(newConvAct(st.conv, act), args...)
			if err := builderErr(b); err != nil {
				return nil, st.n.wrap(err)
			}
			for _, j := range dead {
				skip[j] = true
			}
			continue
		}
		in := make([]infer.Ref, len(st.in))
		for j, s := range st.in {
			in[j] = -1
			if s >= 0 {
				if in[j] = ref(s); in[j] < 0 {
					return nil, st.n.errorf("input %d %q has no value in the plan", j, st.n.Inputs[j])
				}
			}
		}
		outs, err := st.lower(b, in)
		if err == nil {
			err = builderErr(b)
		}
		if err != nil {
			return nil, st.n.wrap(err)
		}
		for j, s := range st.out {
			if s >= 0 && j < len(outs) {
				refs[s] = outs[j]
			}
		}
	}
	outs := make([]infer.Ref, len(fm.outputs))
	for i, p := range fm.outputs {
		if fm.consts[p.slot] != nil || refs[p.slot] < 0 {
			return nil, fmt.Errorf("graph output %q is a constant or not computed; expected an output of a node", p.name)
		}
		outs[i] = refs[p.slot]
	}
	g, err := b.Graph(outs...)
	if err != nil {
		return nil, err
	}
	return g.Compile(infer.Options{})
}

// noPlanForm is the reason a step keeps its signature off the plan.
func noPlanForm(st step) error {
	return st.n.errorf("op %s has no plan form for these shapes; expected the ops a plan holds (conv, pooling, gemm, element-wise, reshapes)", opName(st.n.Domain, st.n.OpType))
}

// builderErr returns the Builder's first error, if it has one.
func builderErr(b *infer.Builder) error {
	if _, err := b.Graph(0); err != nil && !strings.Contains(err.Error(), "not a value of this builder") {
		return err
	}
	return nil
}

// Path names how Run computes a signature: on a compiled plan or on the
// interpreter.
type Path int

const (
	// PathPlan is an infer.Plan compiled for the signature.
	PathPlan Path = iota + 1
	// PathInterpreter is Compile's steps, one kernel each.
	PathInterpreter
)

func (p Path) String() string {
	switch p {
	case PathPlan:
		return "plan"
	case PathInterpreter:
		return "interpreter"
	}
	return fmt.Sprintf("Path(%d)", int(p))
}

// PathFor returns the path Run takes for inputs of dims (one shape per
// graph input, by name) and, for the interpreter, why the graph does not
// go on a plan. It compiles the signature's plan if Run has not yet.
func (m *Model) PathFor(dims map[string][]int) (path Path, why string, err error) {
	in, err := m.zeros(dims)
	if err != nil {
		return 0, "", err
	}
	e := m.entry(in)
	if e.plan != nil {
		return PathPlan, "", nil
	}
	return PathInterpreter, e.why.Error(), nil
}

// zeros returns a zero tensor per graph input, of the dims given by name,
// in the graph's order.
func (m *Model) zeros(dims map[string][]int) ([]*tensor.Tensor, error) {
	if m == nil {
		return nil, errors.New("onnx/run: a nil model; expected one from Compile or Load")
	}
	named := make(map[string]*tensor.Tensor, len(dims))
	for _, p := range m.inputs {
		d, ok := dims[p.name]
		if !ok {
			continue // bind names what is missing
		}
		dt, _ := runtimeDType(p.elem)
		t, err := tensor.New(dt, d...)
		if err != nil {
			return nil, fmt.Errorf("onnx/run: graph input %q: %w", p.name, err)
		}
		named[p.name] = t
	}
	for name := range dims {
		if _, ok := named[name]; !ok {
			named[name] = tensor.Scalar(float32(0)) // not an input: bind says so
		}
	}
	return m.bind(named)
}

// Explain writes which path Run takes for inputs of dims and, on the plan,
// the plan before and after its passes (infer.Plan.Explain: each op with
// its shapes and share of the FLOPs); on the interpreter, why, and its
// steps.
func (m *Model) Explain(w io.Writer, dims map[string][]int) error {
	if w == nil {
		return errors.New("onnx/run: Explain to a nil writer")
	}
	in, err := m.zeros(dims)
	if err != nil {
		return err
	}
	e := m.entry(in)
	if e.plan != nil {
		if _, err := fmt.Fprintf(w, "path: plan (the graph compiled for this signature, every node lowered onto Plumb ops)\n"); err != nil {
			return err
		}
		return e.plan.Explain(w)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "path: interpreter (%v)\n%d steps:\n", e.why, len(m.steps))
	for i, st := range m.steps {
		fmt.Fprintf(&sb, "  %3d  %s %q\n", i, opName(st.n.Domain, st.n.OpType), st.n.Name)
	}
	_, err = io.WriteString(w, sb.String())
	return err
}

// lowerOp is the lowerFn of a node whose one output is op applied to the
// node's given inputs in order.
func lowerOp(op ops.Op) lowerFn {
	return func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		args := make([]infer.Ref, 0, len(in))
		for _, r := range in {
			if r >= 0 {
				args = append(args, r)
			}
		}
		return []infer.Ref{b.Op(op, args...)}, nil
	}
}

// lowerFirst is the lowerFn of a node whose one output is op applied to
// the node's first input alone (its other inputs are attributes that
// compiling read: Clip's bounds, a reduction's axes).
func lowerFirst(op ops.Op) lowerFn {
	return func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		return []infer.Ref{b.Op(op, in[0])}, nil
	}
}

// lowerReshape is the lowerFn of a node whose output is its first input
// with the (known) dims of out: Reshape, Flatten, Squeeze, Unsqueeze.
func (c *ctx) lowerReshape() {
	shape := c.out[0].shape
	if !known(shape) || !c.plan || !c.floatIn(0) {
		return
	}
	c.lower = func(b *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
		return []infer.Ref{b.Op(ops.ReshapeOp(shape...), in[0])}, nil
	}
}

// lowerIdentity is the lowerFn of a node whose output is its first input.
func lowerIdentity(_ *infer.Builder, in []infer.Ref) ([]infer.Ref, error) {
	return []infer.Ref{in[0]}, nil
}

// floatIn reports whether input i of the node is FLOAT or DOUBLE.
func (c *ctx) floatIn(i int) bool { return c.has(i) && isFloatElem(c.in[i].elem) }
