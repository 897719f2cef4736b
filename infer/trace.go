package infer

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Forward is a model's forward pass on a tape: it wraps the inputs (with
// tape.Const, or as the ids of an embedding) and returns the output.
type Forward func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value

// Trace runs forward once on an inference tape (graph.NewEvalTape: dropout
// off, batch norm on its moving statistics) on the example inputs and
// captures every op it applies, through graph.Tape.SetTrace, into a Graph,
// as torch.jit.trace does. A tensor an op reads is an input when it is one
// of example (the same tensor), an intermediate when an earlier op made
// it, and a constant otherwise: parameters, moving statistics, tensors the
// model made itself. Constants are shared with the model, not copied, so
// the model's parameters must not change while a plan from the graph is in
// use. What the model computes outside ops (a branch on the input's
// values, offsets read from a ragged batch) is fixed at the example's: the
// graph holds for the example's shapes (see the package doc for variable
// shapes).
func Trace(forward Forward, example ...*tensor.Tensor) (*Graph, error) {
	if forward == nil {
		return nil, errors.New("infer: Trace of a nil forward pass")
	}
	for i, x := range example {
		if x == nil {
			return nil, fmt.Errorf("infer: Trace: example input %d is nil", i)
		}
		if x.Storage() != nil {
			return nil, fmt.Errorf("infer: Trace: example input %d is on %v; a plan runs in host memory", i, x.Device())
		}
	}
	b := NewBuilder()
	refs := map[*tensor.Tensor]Ref{}
	for _, x := range example {
		if _, dup := refs[x]; dup {
			return nil, errors.New("infer: Trace: the same tensor passed as two example inputs")
		}
		refs[x] = b.input(x)
	}
	tape := graph.NewEvalTape()
	tape.SetTrace(func(op ops.Op, in []*tensor.Tensor, out *tensor.Tensor) {
		rs := make([]Ref, len(in))
		for i, t := range in {
			r, ok := refs[t]
			if !ok {
				r = b.Const(t)
				refs[t] = r
			}
			rs[i] = r
		}
		refs[out] = b.node(op, rs, out)
	})
	y := forward(tape, example)
	out, err := y.Tensor()
	if err != nil {
		return nil, fmt.Errorf("infer: Trace: %w", err)
	}
	r, ok := refs[out]
	if !ok || b.g.values[r].kind == kindConst {
		return nil, errors.New("infer: Trace: the output is not computed by an op from the inputs")
	}
	return b.Graph(r)
}

// TraceLayer traces a layer applied to one input, x on the tape.
func TraceLayer(l layers.Layer, example *tensor.Tensor) (*Graph, error) {
	if l == nil {
		return nil, errors.New("infer: TraceLayer of a nil layer")
	}
	return Trace(func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return l.Forward(tape.Const(in[0]))
	}, example)
}
