package run

import (
	"errors"
	"fmt"
	"sort"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// Model is a compiled ONNX graph. It is read-only: Run is safe to call
// from several goroutines at once.
type Model struct {
	opset   int64
	inputs  []port
	outputs []port
	consts  []*tensor.Tensor // by slot: the value of a folded or constant slot, else nil
	nslots  int
	steps   []step
	lastUse []int // by slot: the last step reading it (-1: none), so Run drops values early

	src    *onnx.Model      // the model compiled, for the plans of each signature
	opsets map[string]int64 // by domain
	plans  *planCache
}

// port is a graph input or output: its name, slot, element type and
// declared dims (-1 for a symbolic or unknown one, with its name in
// params).
type port struct {
	name   string
	slot   int
	elem   onnx.ElemType
	dims   []int // nil when the file gives no shape
	params []string
}

// step is one node left to run at run time.
type step struct {
	n     *node
	k     kernel
	lower lowerFn   // nil: the node has no plan form (see plan.go)
	conv  *convSpec // a convolution an activation may fuse into
	act   *actSpec  // an activation that may fuse into the convolution before it
	in    []int     // slots; -1 for an absent optional input
	out   []int
}

// Load reads the model file at path (see onnx.Load) and compiles it.
func Load(path string) (*Model, error) {
	m, err := onnx.Load(path)
	if err != nil {
		return nil, err
	}
	return Compile(m)
}

// Compile maps every node of m's main graph onto a kernel, infers types
// and shapes and folds what the graph's inputs do not reach (see the
// package documentation). It fails on the first node it cannot compile.
func Compile(m *onnx.Model) (*Model, error) {
	if m == nil || m.Graph == nil {
		return nil, errors.New("onnx/run: no model or no graph; expected a model read by onnx.Load or onnx.Decode")
	}
	c := &compiler{model: &Model{opset: m.Opset}, slots: map[string]int{}, opsets: map[string]int64{}}
	for _, o := range m.Opsets {
		c.opsets[domainName(o.Domain)] = o.Version
	}
	cm, err := c.compile(m.Graph)
	if err != nil {
		return nil, err
	}
	cm.src, cm.opsets, cm.plans = m, c.opsets, &planCache{}
	return cm, nil
}

type compiler struct {
	model  *Model
	slots  map[string]int
	infos  []info
	opsets map[string]int64
	// fixed, when not nil, gives every graph input its dims: the graph
	// is compiled for that one signature, to be lowered onto a plan.
	fixed map[string][]int
}

func domainName(d string) string {
	if d == "" {
		return "ai.onnx"
	}
	return d
}

// newSlot names a fresh slot for value name.
func (c *compiler) newSlot(name string, in info) int {
	s := len(c.infos)
	c.slots[name] = s
	c.infos = append(c.infos, in)
	return s
}

func (c *compiler) compile(g *onnx.Graph) (*Model, error) {
	m := c.model
	for _, in := range g.Initializers {
		elem := computeElem(in.Elem)
		if elem == 0 {
			elem = elemOf(in.Tensor.DType())
		}
		c.newSlot(in.Name, constInfo(in.Tensor, elem))
	}
	for _, v := range g.Inputs {
		if _, ok := runtimeDType(computeElem(v.Elem)); !ok {
			return nil, fmt.Errorf("onnx/run: graph input %q has element type %v; expected FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (given as float32), INT32, INT64 or BOOL", v.Name, v.Elem)
		}
		p := port{name: v.Name, elem: computeElem(v.Elem)}
		in := info{elem: p.elem}
		if v.Shape != nil {
			p.dims = make([]int, len(v.Shape))
			p.params = make([]string, len(v.Shape))
			in.shape = make([]int, len(v.Shape))
			for i, d := range v.Shape {
				p.dims[i], p.params[i], in.shape[i] = int(d.Size), d.Param, int(d.Size)
			}
		}
		if dims, ok := c.fixed[v.Name]; ok {
			in.shape = append([]int(nil), dims...)
		}
		p.slot = c.newSlot(v.Name, in)
		m.inputs = append(m.inputs, p)
	}
	for i := range g.Nodes {
		if err := c.node(&g.Nodes[i]); err != nil {
			return nil, err
		}
	}
	for _, v := range g.Outputs {
		s, ok := c.slots[v.Name]
		if !ok {
			return nil, fmt.Errorf("onnx/run: graph output %q is produced by no node, input or initializer; expected a value of the graph", v.Name)
		}
		m.outputs = append(m.outputs, port{name: v.Name, slot: s, elem: c.infos[s].elem})
	}
	m.nslots = len(c.infos)
	m.prune()
	m.consts = make([]*tensor.Tensor, m.nslots)
	for s, in := range c.infos {
		m.consts[s] = in.konst
	}
	m.lastUse = make([]int, m.nslots)
	for s := range m.lastUse {
		m.lastUse[s] = -1
	}
	for i, st := range m.steps {
		for _, s := range st.in {
			if s >= 0 {
				m.lastUse[s] = i
			}
		}
	}
	return m, nil
}

// prune drops the steps none of whose outputs is read at run time: a
// graph output, or an input of a later step that is kept. (A Shape whose
// result folded downstream is such a step.)
func (m *Model) prune() {
	live := make([]bool, m.nslots)
	for _, p := range m.outputs {
		live[p.slot] = true
	}
	keep := make([]bool, len(m.steps))
	for i := len(m.steps) - 1; i >= 0; i-- {
		st := m.steps[i]
		for _, s := range st.out {
			if s >= 0 && live[s] {
				keep[i] = true
			}
		}
		if !keep[i] {
			continue
		}
		for _, s := range st.in {
			if s >= 0 {
				live[s] = true
			}
		}
	}
	kept := m.steps[:0]
	for i, st := range m.steps {
		if keep[i] {
			kept = append(kept, st)
		}
	}
	m.steps = kept
}

// node compiles one node: looks its op up, runs the op's compile function
// (attributes, inference, kernel) and folds it when every input is known.
func (c *compiler) node(on *onnx.Node) error {
	n := &node{Node: on, opset: c.opsets[domainName(on.Domain)]}
	n.where = fmt.Sprintf("node %d %q (%s, opset %d)", on.Index, on.Name, opName(on.Domain, on.OpType), n.opset)
	def, ok := lookup(on.Domain, on.OpType)
	if !ok {
		return n.errorf("op type %s is not supported; expected one of the ops the importer runs (%s)", opName(on.Domain, on.OpType), supportedList())
	}
	if n.opset < def.minOpset {
		return n.errorf("op %s is supported from opset %d; expected a model importing opset %d or later", on.OpType, def.minOpset, def.minOpset)
	}
	cx := &ctx{n: n, in: make([]info, len(on.Inputs)), plan: c.fixed != nil}
	slots := make([]int, len(on.Inputs))
	for i, name := range on.Inputs {
		if name == "" {
			slots[i] = -1
			cx.in[i] = info{absent: true}
			continue
		}
		s, ok := c.slots[name]
		if !ok {
			return n.errorf("input %d %q is produced by no earlier node, graph input or initializer; expected the nodes in topological order", i, name)
		}
		slots[i] = s
		cx.in[i] = c.infos[s]
	}
	cx.out = make([]info, len(on.Outputs))
	k, err := def.compile(cx)
	if err != nil {
		return err
	}
	outSlots := make([]int, len(on.Outputs))
	fold := !def.noFold
	inElems := 0
	for _, in := range cx.in {
		if !in.absent && in.konst == nil {
			fold = false
		}
		if in.konst != nil {
			inElems += in.konst.Size()
		}
	}
	// Fold only outputs whose size is known and justified: no bigger than
	// the constants that go in, or than maxFoldElems. A node whose inputs
	// are constants but whose output would be larger (a ConstantOfShape of
	// a huge shape, a broadcast of a row and a column) runs at run time,
	// so that compiling never allocates more than the file justifies.
	for i, o := range cx.out {
		if on.Outputs[i] == "" {
			continue
		}
		if !known(o.shape) || size(o.shape) > max(maxFoldElems, inElems) {
			fold = false
		}
	}
	var folded []*tensor.Tensor
	if fold {
		folded, err = k(inputsOf(cx.in))
		if err != nil {
			return n.wrap(err)
		}
	}
	allConst := true
	for i, name := range on.Outputs {
		o := cx.out[i]
		if fold && i < len(folded) {
			o = constInfo(folded[i], o.elemOr(elemOf(folded[i].DType())))
		}
		o.settle()
		if o.konst == nil && name != "" {
			allConst = false
		}
		if name == "" {
			outSlots[i] = -1
			continue
		}
		outSlots[i] = c.newSlot(name, o)
	}
	if !allConst {
		c.model.steps = append(c.model.steps, step{n: n, k: k, lower: cx.lower, conv: cx.conv, act: cx.act, in: slots, out: outSlots})
	}
	return nil
}

// maxFoldElems is the most elements a folded value may have beyond its
// inputs' own.
const maxFoldElems = 1 << 16

func inputsOf(in []info) []*tensor.Tensor {
	out := make([]*tensor.Tensor, len(in))
	for i, v := range in {
		out[i] = v.konst
	}
	return out
}

// Run computes the graph's outputs from inputs, one tensor per graph input
// by name. The outputs belong to the caller (an output that folded to a
// constant is a copy); on the interpreter an output may share memory with
// an input it passes through (Identity, Reshape). Each input must have the
// input's element type (BOOL as int64 0 or 1) and its declared sizes; a
// symbolic dimension takes any size.
//
// Run computes on the plan compiled for the inputs' dims, the first time
// they come, when every node left after folding has a plan form, and on
// the interpreter otherwise (see Explain and PathFor).
func (m *Model) Run(inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	in, err := m.bind(inputs)
	if err != nil {
		return nil, err
	}
	e := m.entry(in)
	if e.plan == nil {
		return m.interpret(in)
	}
	outs, err := e.plan.Forward(in...)
	if err != nil {
		return nil, fmt.Errorf("onnx/run: plan: %w", err)
	}
	res := make(map[string]*tensor.Tensor, len(m.outputs))
	for i, p := range m.outputs {
		res[p.name] = outs[i]
	}
	return res, nil
}

// Interpret is Run on the interpreter, whatever the signature: each node
// left after folding runs its own kernel, and intermediates are fresh
// tensors.
func (m *Model) Interpret(inputs map[string]*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	in, err := m.bind(inputs)
	if err != nil {
		return nil, err
	}
	return m.interpret(in)
}

// bind checks inputs against the graph's inputs and returns them in the
// graph's order.
func (m *Model) bind(inputs map[string]*tensor.Tensor) ([]*tensor.Tensor, error) {
	if m == nil {
		return nil, errors.New("onnx/run: Run on a nil model; expected one from Compile or Load")
	}
	in := make([]*tensor.Tensor, len(m.inputs))
	for i, p := range m.inputs {
		t, ok := inputs[p.name]
		if !ok || t == nil {
			return nil, fmt.Errorf("onnx/run: no tensor for graph input %q; expected %s", p.name, p.describe())
		}
		if err := p.check(t); err != nil {
			return nil, err
		}
		in[i] = t
	}
	for name := range inputs {
		if !m.hasInput(name) {
			return nil, fmt.Errorf("onnx/run: %q is not an input of the graph; expected one of %v", name, m.InputNames())
		}
	}
	return in, nil
}

// interpret runs the steps on in, the graph's inputs in order.
func (m *Model) interpret(inputs []*tensor.Tensor) (map[string]*tensor.Tensor, error) {
	vals := make([]*tensor.Tensor, m.nslots)
	copy(vals, m.consts)
	for i, p := range m.inputs {
		vals[p.slot] = inputs[i]
	}
	in := make([]*tensor.Tensor, 0, 8)
	for i, st := range m.steps {
		in = in[:0]
		for _, s := range st.in {
			if s < 0 {
				in = append(in, nil)
				continue
			}
			in = append(in, vals[s])
		}
		outs, err := st.k(in)
		if err != nil {
			return nil, st.n.wrap(err)
		}
		for j, s := range st.out {
			if s < 0 || j >= len(outs) {
				continue
			}
			vals[s] = outs[j]
		}
		for _, s := range st.in {
			if s >= 0 && m.lastUse[s] == i && m.consts[s] == nil && !m.isOutput(s) {
				vals[s] = nil
			}
		}
	}
	res := make(map[string]*tensor.Tensor, len(m.outputs))
	for _, p := range m.outputs {
		if vals[p.slot] == nil {
			return nil, fmt.Errorf("onnx/run: graph output %q was not computed (an optional output its node does not produce)", p.name)
		}
		// A constant output is the model's own tensor (or a view of a
		// weight): the caller gets a copy, so that writing to it cannot
		// change later Runs.
		if m.consts[p.slot] != nil {
			res[p.name] = vals[p.slot].Clone()
			continue
		}
		res[p.name] = vals[p.slot]
	}
	return res, nil
}

func (m *Model) isOutput(s int) bool {
	for _, p := range m.outputs {
		if p.slot == s {
			return true
		}
	}
	return false
}

func (m *Model) hasInput(name string) bool {
	for _, p := range m.inputs {
		if p.name == name {
			return true
		}
	}
	return false
}

// InputNames are the graph's inputs (initializers excluded), in order.
func (m *Model) InputNames() []string {
	if m == nil {
		return nil
	}
	out := make([]string, len(m.inputs))
	for i, p := range m.inputs {
		out[i] = p.name
	}
	return out
}

// OutputNames are the graph's outputs, in order.
func (m *Model) OutputNames() []string {
	if m == nil {
		return nil
	}
	out := make([]string, len(m.outputs))
	for i, p := range m.outputs {
		out[i] = p.name
	}
	return out
}

// Steps is the number of nodes left to run at run time, after folding.
func (m *Model) Steps() int {
	if m == nil {
		return 0
	}
	return len(m.steps)
}

// describe is the port's element type and dims, for errors.
func (p port) describe() string {
	if p.dims == nil {
		return fmt.Sprintf("a %v tensor", p.elem)
	}
	ds := make([]string, len(p.dims))
	for i, d := range p.dims {
		switch {
		case p.params[i] != "":
			ds[i] = p.params[i]
		case d < 0:
			ds[i] = "?"
		default:
			ds[i] = fmt.Sprint(d)
		}
	}
	return fmt.Sprintf("a %v tensor of dims %v", p.elem, ds)
}

func (p port) check(t *tensor.Tensor) error {
	dt, _ := runtimeDType(p.elem)
	if t.Device() != nil {
		return fmt.Errorf("onnx/run: graph input %q is on device %v; expected a tensor in host memory", p.name, t.Device())
	}
	if t.DType() != dt {
		return fmt.Errorf("onnx/run: graph input %q is %v %v; expected %s (stored as %v)", p.name, t.DType(), t.Shape(), p.describe(), dt)
	}
	if p.dims == nil {
		return nil
	}
	ok := t.Rank() == len(p.dims)
	for i := 0; ok && i < len(p.dims); i++ {
		ok = p.dims[i] < 0 || p.dims[i] == t.Dim(i)
	}
	if !ok {
		return fmt.Errorf("onnx/run: graph input %q is %v %v; expected %s", p.name, t.DType(), t.Shape(), p.describe())
	}
	return nil
}

// opName is the op type, prefixed by its domain outside ai.onnx (as
// onnx.Inspect names it).
func opName(domain, opType string) string {
	if domain == "" || domain == "ai.onnx" {
		return opType
	}
	return domain + "." + opType
}

func supportedList() string {
	s := Supported()
	if len(s) > 12 {
		return fmt.Sprintf("%d op types; see run.Supported", len(s))
	}
	sort.Strings(s)
	return fmt.Sprint(s)
}
