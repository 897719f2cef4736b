package infer

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Ref names a value of a Graph: an input, a constant or an op's output.
type Ref int

// kind says where a value comes from.
type kind uint8

const (
	kindInput kind = iota
	kindConst
	kindOp
)

// value is one tensor of a Graph: its dtype and shape (resolved for the
// graph's input signature), and for a constant the tensor itself, shared
// read-only by every call of every plan compiled from the graph.
type value struct {
	kind  kind
	dt    tensor.DType
	shape tensor.Shape
	c     *tensor.Tensor // kindConst
	input int            // kindInput: the position among the inputs
}

// node is one op application: the op, with its attributes, on values.
type node struct {
	op  ops.Op
	in  []Ref
	out Ref
}

// Graph is a static forward pass: ops in the order they run on values whose
// shapes are fixed, constants (weights) as tensors, no tape, no gradient.
// Trace captures one from a model; Builder makes one node by node (an
// importer of another format builds on it). Compile turns it into a Plan.
type Graph struct {
	values  []value
	nodes   []node
	inputs  []Ref
	outputs []Ref
}

// Builder builds a Graph from a list of (op, inputs) nodes, as an importer
// of a serialised graph does. Each Op call runs the op once on example
// tensors (zeros of the inputs' shapes, and the constants), which checks
// it and resolves its output's shape, as Trace does on a model.
type Builder struct {
	g       Graph
	example []*tensor.Tensor // per value: the tensor the op produced, or the input's zeros
	err     error
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{} }

// Input adds the next input of the graph, of dtype dt and shape shape.
func (b *Builder) Input(dt tensor.DType, shape ...int) Ref {
	if b == nil {
		return -1
	}
	t, err := tensor.New(dt, shape...)
	if err != nil {
		b.fail(fmt.Errorf("infer: input %d: %w", len(b.g.inputs), err))
		return -1
	}
	return b.input(t)
}

func (b *Builder) input(example *tensor.Tensor) Ref {
	r := b.add(value{kind: kindInput, dt: example.DType(), shape: example.Shape().Clone(), input: len(b.g.inputs)}, example)
	b.g.inputs = append(b.g.inputs, r)
	return r
}

// Const adds a constant: t is shared, not copied, and must not change while
// a plan compiled from the graph is in use.
func (b *Builder) Const(t *tensor.Tensor) Ref {
	switch {
	case b == nil:
		return -1
	case t == nil:
		b.fail(errors.New("infer: Const of a nil tensor"))
		return -1
	case t.Storage() != nil:
		b.fail(fmt.Errorf("infer: Const on %v: a plan runs in host memory; move it with To(nil)", t.Device()))
		return -1
	}
	return b.add(value{kind: kindConst, dt: t.DType(), shape: t.Shape().Clone(), c: t}, t)
}

// Op adds op applied to in and returns its output. The op runs once on the
// inputs' example tensors; its error (wrong shapes, attributes) is the
// Builder's, returned by Graph.
func (b *Builder) Op(op ops.Op, in ...Ref) Ref {
	if b == nil {
		return -1
	}
	if b.err != nil {
		return -1
	}
	if op == nil {
		b.fail(errors.New("infer: Op of a nil op"))
		return -1
	}
	ts := make([]*tensor.Tensor, len(in))
	for i, r := range in {
		if r < 0 || int(r) >= len(b.g.values) {
			b.fail(fmt.Errorf("infer: %s: input %d is not a value of this builder", op.Name(), i))
			return -1
		}
		ts[i] = b.example[r]
	}
	out, err := ops.Run(op, ts...)
	if err != nil {
		b.fail(fmt.Errorf("infer: node %d: %w", len(b.g.nodes), err))
		return -1
	}
	return b.node(op, in, out)
}

// node records op on in with the output tensor it computed.
func (b *Builder) node(op ops.Op, in []Ref, out *tensor.Tensor) Ref {
	r := b.add(value{kind: kindOp, dt: out.DType(), shape: out.Shape().Clone()}, out)
	b.g.nodes = append(b.g.nodes, node{op: op, in: append([]Ref(nil), in...), out: r})
	return r
}

func (b *Builder) add(v value, example *tensor.Tensor) Ref {
	b.g.values = append(b.g.values, v)
	b.example = append(b.example, example)
	return Ref(len(b.g.values) - 1)
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Graph returns the graph with outputs outs, or the first error of the
// building.
func (b *Builder) Graph(outs ...Ref) (*Graph, error) {
	switch {
	case b == nil:
		return nil, errors.New("infer: Graph of a nil Builder")
	case b.err != nil:
		return nil, b.err
	case len(outs) == 0:
		return nil, errors.New("infer: a graph needs an output")
	}
	for i, r := range outs {
		if r < 0 || int(r) >= len(b.g.values) {
			return nil, fmt.Errorf("infer: output %d is not a value of this builder", i)
		}
	}
	g := b.g
	g.outputs = append([]Ref(nil), outs...)
	return &g, nil
}

// Inputs returns the dtypes and shapes of the graph's inputs, in order.
func (g *Graph) Inputs() []Signature {
	if g == nil {
		return nil
	}
	return signatures(g.values, g.inputs)
}

// signatures returns the dtype and shape of each value of rs.
func signatures(values []value, rs []Ref) []Signature {
	s := make([]Signature, len(rs))
	for i, r := range rs {
		s[i] = Signature{DType: values[r].dt, Shape: values[r].shape.Clone()}
	}
	return s
}

// Len returns the number of ops in the graph.
func (g *Graph) Len() int {
	if g == nil {
		return 0
	}
	return len(g.nodes)
}

// Signature is a tensor's dtype and shape.
type Signature struct {
	DType tensor.DType
	Shape tensor.Shape
}

func (s Signature) String() string { return fmt.Sprintf("%v%v", s.DType, s.Shape) }

// clone returns a copy of g whose slices a pass may change.
func (g *Graph) clone() *Graph {
	c := &Graph{
		values:  append([]value(nil), g.values...),
		nodes:   append([]node(nil), g.nodes...),
		inputs:  append([]Ref(nil), g.inputs...),
		outputs: append([]Ref(nil), g.outputs...),
	}
	return c
}

// uses returns, per value, the indices of the nodes that read it.
func (g *Graph) uses() [][]int {
	u := make([][]int, len(g.values))
	for i, n := range g.nodes {
		for _, r := range n.in {
			u[r] = append(u[r], i)
		}
	}
	return u
}

// soleReader returns a function giving the index of the one node that
// reads r, or -1 when none or several do or r is an output of the graph
// (a value a pass may fuse away).
func (g *Graph) soleReader() func(r Ref) int {
	uses := g.uses()
	return func(r Ref) int {
		if len(uses[r]) != 1 || g.isOutput(r) {
			return -1
		}
		return uses[r][0]
	}
}

// isOutput reports whether r is one of the graph's outputs.
func (g *Graph) isOutput(r Ref) bool {
	for _, o := range g.outputs {
		if o == r {
			return true
		}
	}
	return false
}
