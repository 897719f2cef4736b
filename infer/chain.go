package infer

import (
	"errors"
	"strings"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// stage is one elementwise op of a fused loop, applied to the running
// value: a unary op, or a binary op whose other operand is the loop's
// input other (the running value being operand a when first, else b).
type stage struct {
	op    ops.Op
	other int // the loop op's input index of the other operand; -1 for a unary op
	first bool
}

// chainPiece is the most elements a fused loop runs its stages over at a
// time: a piece stays in L1 while every stage reads and writes it.
const chainPiece = 2048

// chainOp runs a chain of elementwise ops (unary, or binary with the
// running value as one operand and anything broadcasting to its shape as
// the other) as one loop: the output is cut into pieces, and every stage
// runs on a piece before the next piece, so the chain reads its inputs
// and writes its output once instead of once per op (the elementwise
// fusion of XLA's loop fusion, TVM's injective fusion and ONNX Runtime's
// elementwise fusion). Each stage runs the op's own loop on the piece
// (ops.UnaryRun, ops.BinaryRun), so the result has the unfused ops' bits.
// Input 0 is the chain's first operand, of the output's shape; the others
// are the binary stages' other operands.
type chainOp struct {
	name   string
	stages []stage
	shape  tensor.Shape
	run    int     // elements of a run: trailing axes along which every input moves by 1 or holds
	step   []int   // per input: 1 (moves along a run) or 0 (held)
	outer  []int   // the output's dims before the run
	stride [][]int // per input: its stride along each outer dim (0 where broadcast)
}

// newChain returns the loop of stages over inputs of the given shapes,
// out being the output's (and input 0's) shape; a run spans at most the
// axes from keep on.
func newChain(stages []stage, out tensor.Shape, shapes []tensor.Shape, keep int) *chainOp {
	names := make([]string, len(stages))
	for i, s := range stages {
		names[i] = s.op.Name()
	}
	o := &chainOp{name: "elementwise(" + strings.Join(names, ",") + ")", stages: stages, shape: out.Clone()}
	st := make([][]int, len(shapes))
	for j, s := range shapes {
		st[j] = broadcastStrides(s, out)
	}
	// The run grows from the last axis while every input either moves
	// contiguously (stride = the output's) or holds along it.
	o.step = make([]int, len(shapes))
	for j := range o.step {
		o.step[j] = -1
	}
	axis, run := len(out), 1
	for axis > keep {
		d, ok := axis-1, true
		for j := range st {
			if out[d] == 1 {
				continue
			}
			mode := -1
			switch st[j][d] {
			case run:
				mode = 1
			case 0:
				mode = 0
			}
			if mode < 0 || (o.step[j] >= 0 && o.step[j] != mode) {
				ok = false
				break
			}
		}
		if !ok {
			break
		}
		for j := range st {
			if out[d] != 1 && o.step[j] < 0 {
				o.step[j] = b2i(st[j][d] != 0)
			}
		}
		run *= out[d]
		axis--
	}
	for j := range o.step {
		if o.step[j] < 0 {
			o.step[j] = 1
		}
	}
	o.run, o.outer = run, append([]int(nil), out[:axis]...)
	o.stride = make([][]int, len(shapes))
	for j := range st {
		o.stride[j] = st[j][:axis]
	}
	return o
}

// broadcastStrides returns, per axis of out, the element stride of a
// tensor of shape s broadcast to out (NumPy's rules: s aligned to the
// right, 0 along axes s lacks or has of size 1).
func broadcastStrides(s, out tensor.Shape) []int {
	st := make([]int, len(out))
	k := 1
	for i := len(s) - 1; i >= 0; i-- {
		d := len(out) - len(s) + i
		if s[i] != 1 {
			st[d] = k
		}
		k *= s[i]
	}
	return st
}

func (o *chainOp) Name() string { return o.name }

// flops counts one operation per stage and output element (Explain).
func (o *chainOp) flops() int64 { return int64(o.shape.Size()) * int64(len(o.stages)) }

func (o *chainOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := o.check(in); err != nil {
		return nil, err
	}
	out := tensor.Empty(in[0].DType(), o.shape...)
	return out, o.ForwardInto(out, in)
}

func (o *chainOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New(o.name + ": an inference plan's op has no gradient")
}

func (o *chainOp) check(in []*tensor.Tensor) error {
	if len(in) == 0 || len(in) != len(o.stride) || in[0] == nil || !in[0].DType().IsFloat() || !sameSig(in[0], in[0].DType(), o.shape) {
		return ops.Errorf(o.name, in, "want %d inputs, the first a host float tensor %v", len(o.stride), o.shape)
	}
	return o.checkOthers(in)
}

// checkOthers checks the stages' other operands, in[1:], against the
// shapes the loop was compiled for, and their dtype against in[0]'s.
func (o *chainOp) checkOthers(in []*tensor.Tensor) error {
	for j, t := range in[1:] {
		if t == nil || t.DType() != in[0].DType() || t.Size() != broadcastSize(o.stride[j+1], o.outer, o.step[j+1], o.run) {
			return ops.Errorf(o.name, in, "want input %d of dtype %v broadcasting to %v as compiled", j+1, in[0].DType(), o.shape)
		}
	}
	return nil
}

// broadcastSize is the number of elements an input with these outer
// strides and run step spans: the largest offset it reads, plus one.
func broadcastSize(stride, outer []int, step, run int) int {
	last := 0
	for d, s := range stride {
		last += s * (outer[d] - 1)
	}
	if step == 1 {
		last += run - 1
	}
	return last + 1
}

// ForwardInto is the op's ops.Into.
func (o *chainOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := o.check(in); err != nil {
		return err
	}
	if !sameSig(out, in[0].DType(), o.shape) {
		return ops.Errorf(o.name, in, "ForwardInto an output; want a host tensor %v%v", in[0].DType(), o.shape)
	}
	switch out.DType() {
	case tensor.Float32:
		chainKernel[float32](o, out, in)
	case tensor.Float64:
		chainKernel[float64](o, out, in)
	}
	return nil
}

// chainKernel runs the stages piece by piece over the cores: the output
// is rows of o.run elements, each cut into pieces of at most chainPiece.
func chainKernel[T tensor.Float](o *chainOp, out *tensor.Tensor, in []*tensor.Tensor) {
	y, x := tensor.Data[T](out), tensor.Data[T](in[0])
	per := (o.run + chainPiece - 1) / chainPiece
	rows := len(y) / max(o.run, 1)
	if len(y) < par.MinWork { // on the caller, without the parallel loop's closures
		chainPieces(o, y, x, in, 0, rows*per)
		return
	}
	par.RowsOf(rows*per, min(o.run, chainPiece), chainJob[T]{o: o, y: y, x: x, in: in})
}

// chainJob is chainKernel's loop body, a job so that the loop allocates
// nothing.
type chainJob[T tensor.Float] struct {
	o    *chainOp
	y, x []T
	in   []*tensor.Tensor
}

func (j *chainJob[T]) Range(_, lo, hi int) { chainPieces(j.o, j.y, j.x, j.in, lo, hi) }

// chainPieces runs the pieces [lo, hi), numbered row by row.
func chainPieces[T tensor.Float](o *chainOp, y, x []T, in []*tensor.Tensor, lo, hi int) {
	per := (o.run + chainPiece - 1) / chainPiece
	for u := lo; u < hi; u++ {
		r, p := u/per, u%per
		a, b := p*chainPiece, min((p+1)*chainPiece, o.run)
		runStages(o, y[r*o.run+a:r*o.run+b], x[r*o.run+a:], in, r, a)
	}
}

// runStages runs the stages on y, the elements [a, a+len(y)) of row r,
// the first stage reading src (input 0's elements there, or y itself).
func runStages[T tensor.Float](o *chainOp, y, src []T, in []*tensor.Tensor, r, a int) {
	for k, s := range o.stages {
		if k > 0 {
			src = y
		}
		if s.other < 0 {
			ops.UnaryRun(s.op, y, src)
			continue
		}
		j := s.other
		od := tensor.Data[T](in[j])[o.offset(j, r)+a*o.step[j]:]
		if s.first {
			ops.BinaryRun(s.op, y, src, 1, od, o.step[j])
		} else {
			ops.BinaryRun(s.op, y, od, o.step[j], src, 1)
		}
	}
}

// offset returns where input j's elements for row r start.
func (o *chainOp) offset(j, r int) int {
	off := 0
	for d := len(o.outer) - 1; d >= 0; d-- {
		off += (r % o.outer[d]) * o.stride[j][d]
		r /= o.outer[d]
	}
	return off
}

// fuseChains replaces each chain of two or more elementwise ops, each
// read only by the next, whose running value keeps the chain's output
// shape, by one chainOp placed where the chain's last op was.
func fuseChains(g *Graph) (int, error) {
	sole := g.soleReader()
	n := 0
	for i := range g.nodes {
		nd := g.nodes[i]
		if nd.out < 0 || ops.ElementwiseArity(nd.op) == 0 || !g.values[nd.out].dt.IsFloat() {
			continue
		}
		shape := g.values[nd.out].shape
		ins, first, ok := chainStart(g, nd)
		if !ok {
			continue
		}
		var stages []stage
		if len(nd.in) == 2 {
			ins = append(ins, nd.in[1-first])
			stages = append(stages, stage{op: nd.op, other: 1, first: first == 0})
		} else {
			stages = append(stages, stage{op: nd.op, other: -1})
		}
		chain, cur := []int{i}, nd.out
		for {
			j := sole(cur)
			if j < 0 {
				break
			}
			next := g.nodes[j]
			if ops.ElementwiseArity(next.op) == 0 || !g.values[next.out].shape.Equal(shape) {
				break
			}
			if len(next.in) == 1 {
				stages = append(stages, stage{op: next.op, other: -1})
			} else {
				k := 0
				if next.in[1] == cur {
					k = 1
				}
				if next.in[1-k] == cur { // x op x: the running value on both sides
					break
				}
				stages = append(stages, stage{op: next.op, other: len(ins), first: k == 0})
				ins = append(ins, next.in[1-k])
			}
			chain, cur = append(chain, j), next.out
		}
		if len(chain) < 2 {
			continue
		}
		shapes := make([]tensor.Shape, len(ins))
		for k, r := range ins {
			shapes[k] = g.values[r].shape
		}
		last := chain[len(chain)-1]
		g.nodes[last] = node{op: newChain(stages, shape, shapes, 0), in: ins, out: cur}
		for _, k := range chain[:len(chain)-1] {
			g.nodes[k].out = -1
		}
		n++
	}
	g.dropDead()
	return n, nil
}

// chainStart returns the running value of a chain beginning at nd: its
// only input, or the operand of a binary op that has the output's shape
// (first says which), with ok false when neither does.
func chainStart(g *Graph, nd node) (ins []Ref, first int, ok bool) {
	shape := g.values[nd.out].shape
	for k, r := range nd.in {
		if g.values[r].shape.Equal(shape) && g.values[r].dt == g.values[nd.out].dt {
			return []Ref{r}, k, true
		}
	}
	return nil, 0, false
}
