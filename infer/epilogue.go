package infer

import (
	"errors"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// epilogueOp is a convolution or linear layer (with its bias) followed by
// a residual add and an activation, run as one step: the product writes
// the output, then one pass over it, in place and in chunks over the cores
// while each chunk is in cache, adds the residual and applies the
// activation (the conv + bias + add + relu epilogue of cuDNN's fused
// convolution and ONNX Runtime's FusedConv, here a pass after the GEMM
// rather than inside its micro-kernel). The plan then neither writes nor
// reads the unactivated output as a tensor of its own, and needs no slot
// for it.
type epilogueOp struct {
	base     ops.Into
	name     string
	nBase    int    // inputs of base; a residual is input nBase
	residual bool   // add input nBase
	act      string // "relu", "sigmoid", "tanh" or ""
}

func (o *epilogueOp) Name() string { return o.name }

func (o *epilogueOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) == 0 || in[0] == nil {
		return nil, ops.Errorf(o.name, in, "want inputs")
	}
	out, err := ops.Run(o.base.(ops.Op), in[:o.nBase]...)
	if err != nil {
		return nil, err
	}
	return out, o.epilogue(out, in)
}

func (o *epilogueOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New(o.name + ": an inference plan's op has no gradient")
}

// ForwardInto is the op's ops.Into.
func (o *epilogueOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if len(in) != o.nBase+b2i(o.residual) {
		return ops.Errorf(o.name, in, "want %d inputs", o.nBase+b2i(o.residual))
	}
	if err := o.base.ForwardInto(out, in[:o.nBase]); err != nil {
		return err
	}
	return o.epilogue(out, in)
}

func (o *epilogueOp) epilogue(out *tensor.Tensor, in []*tensor.Tensor) error {
	var res *tensor.Tensor
	if o.residual {
		res = in[o.nBase]
		if !sameSig(res, out.DType(), out.Shape()) {
			return ops.Errorf(o.name, in, "want a residual of the output's shape %v%v", out.DType(), out.Shape())
		}
	}
	switch out.DType() {
	case tensor.Float32:
		epilogueKernel(out.Float32s(), floats[float32](res), o.act)
	case tensor.Float64:
		epilogueKernel(out.Float64s(), floats[float64](res), o.act)
	}
	return nil
}

func floats[T tensor.Float](t *tensor.Tensor) []T {
	if t == nil {
		return nil
	}
	return tensor.Data[T](t)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// epilogueKernel adds res (when not nil) into y and applies act, in place.
func epilogueKernel[T tensor.Float](y, res []T, act string) {
	par.ElementsOf(len(y), epilogueJob[T]{y, res, act})
}

// epilogueJob is epilogueKernel's loop body, a job so that the loop
// allocates nothing (par.ElementsOf).
type epilogueJob[T tensor.Float] struct {
	y, res []T
	act    string
}

func (j *epilogueJob[T]) Range(_, lo, hi int) {
	c := j.y[lo:hi]
	if j.res != nil {
		vec.Add(c, j.res[lo:hi])
	}
	switch j.act {
	case "relu":
		vec.Relu(c, c)
	case "sigmoid":
		vec.Sigmoid(c, c)
	case "tanh":
		vec.Tanh(c, c)
	}
}

// epilogueActs are the activations an epilogue applies.
var epilogueActs = map[string]bool{"relu": true, "sigmoid": true, "tanh": true}

// fuseEpilogues makes each conv2d or linear step whose output only an add
// (of a tensor of the same shape) and/or an activation read into one
// epilogueOp.
func fuseEpilogues(g *Graph) (int, error) {
	sole := g.soleReader()
	n := 0
	for i := range g.nodes {
		nd := g.nodes[i]
		name := nd.op.Name()
		base, ok := nd.op.(ops.Into)
		if (name != "conv2d" && name != "linear") || !ok || nd.out < 0 {
			continue
		}
		e := &epilogueOp{base: base, name: name, nBase: len(nd.in)}
		in, out, dead := append([]Ref(nil), nd.in...), nd.out, []int{}
		if j := sole(out); j >= 0 && g.nodes[j].op.Name() == "add" && len(g.nodes[j].in) == 2 {
			a := g.nodes[j].in
			other := a[1]
			if a[1] == out {
				other = a[0]
			}
			if other != out && g.values[other].shape.Equal(g.values[out].shape) && g.defined(other, i) {
				e.residual, e.name = true, e.name+"+add"
				in, out, dead = append(in, other), g.nodes[j].out, append(dead, j)
			}
		}
		if j := sole(out); j >= 0 && epilogueActs[g.nodes[j].op.Name()] {
			e.act, e.name = g.nodes[j].op.Name(), e.name+"+"+g.nodes[j].op.Name()
			out, dead = g.nodes[j].out, append(dead, j)
		}
		if len(dead) == 0 {
			continue
		}
		g.nodes[i] = node{op: e, in: in, out: out}
		for _, j := range dead {
			g.nodes[j].out = -1
		}
		n++
	}
	g.dropDead()
	return n, nil
}

// defined reports whether r is available before node i runs: an input, a
// constant, or the output of an earlier node.
func (g *Graph) defined(r Ref, i int) bool {
	p := g.producer(r)
	return g.values[r].kind != kindOp || (p >= 0 && p < i)
}
