package infer

import (
	"errors"
	"math"
	"strings"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// poolBranch is one input of a fused concat: the branch's source pooled
// per sequence (a sequence_pool) or read as it is, then the elementwise
// ops that followed (its stages), written straight into columns
// [col, col+width) of the output.
type poolBranch struct {
	pool    ops.SequencePoolType // "" when the branch has no pool
	pad     float64
	offsets []int
	lo, hi  int      // the fused op's inputs of the branch: lo its source, then its stages' other operands
	chain   *chainOp // the stages over [B, width], or nil
	col     int
	width   int
	rows    int // the source's rows
	label   string
}

// seqPoolConcatOp is N sequence pools, each with the elementwise ops
// after it, and the concat of their outputs along axis 1, run as one op:
// each output row is made branch by branch, every pool writing its row
// into its columns of the output and its elementwise ops applied there
// while the row is in cache, so neither the pools' outputs nor the
// elementwise ops' are tensors of their own and the concat copies
// nothing (Paddle Fluid 1.3's fusion_seqpool_concat, which fuses a
// CTR or text model's sequence_pool ops with their concat, here with
// each branch's activation as well). A branch may also be a plain input
// or an elementwise chain over one, as the text CNN's
// sequence_conv_pool_max outputs with their bias and tanh are. Each pool
// computes as ops' sequence_pool does (sum, average and sqrt in float64
// per column, max as the first maximum, first, last, pad for an empty
// sequence), so the fused output has the unfused ops' bits.
type seqPoolConcatOp struct {
	name     string
	rows     int // B
	total    int // the output's columns
	branches []poolBranch
	work     int // elements read and written a call, for the cores' split
}

func (o *seqPoolConcatOp) Name() string { return o.name }

// flops counts one operation per pooled element and per stage and output
// element (Explain).
func (o *seqPoolConcatOp) flops() int64 {
	f := int64(0)
	for _, b := range o.branches {
		if b.pool != "" {
			f += int64(b.rows * b.width)
		}
		if b.chain != nil {
			f += b.chain.flops()
		}
	}
	return f
}

func (o *seqPoolConcatOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := o.check(in); err != nil {
		return nil, err
	}
	out := tensor.Empty(in[0].DType(), o.rows, o.total)
	return out, o.ForwardInto(out, in)
}

func (o *seqPoolConcatOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New(o.name + ": an inference plan's op has no gradient")
}

func (o *seqPoolConcatOp) check(in []*tensor.Tensor) error {
	want := 0
	if len(o.branches) > 0 {
		want = o.branches[len(o.branches)-1].hi
	}
	if want == 0 || len(in) != want || in[0] == nil || !in[0].DType().IsFloat() {
		return ops.Errorf(o.name, in, "want the %d inputs it was compiled for, of a float dtype", want)
	}
	dt := in[0].DType()
	for i, b := range o.branches {
		rows := o.rows
		if b.pool != "" {
			rows = b.offsets[len(b.offsets)-1]
		}
		if !sameSig(in[b.lo], dt, tensor.Shape{rows, b.width}) {
			return ops.Errorf(o.name, in, "want branch %d's input a host tensor %v[%d %d]", i, dt, rows, b.width)
		}
		if b.chain != nil {
			if err := b.chain.checkOthers(in[b.lo:b.hi]); err != nil {
				return err
			}
		}
	}
	return nil
}

// ForwardInto is the op's ops.Into.
func (o *seqPoolConcatOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := o.check(in); err != nil {
		return err
	}
	if !sameSig(out, in[0].DType(), tensor.Shape{o.rows, o.total}) {
		return ops.Errorf(o.name, in, "ForwardInto an output; want a host tensor %v[%d %d]", in[0].DType(), o.rows, o.total)
	}
	switch out.DType() {
	case tensor.Float32:
		seqPoolConcatKernel[float32](o, out, in)
	case tensor.Float64:
		seqPoolConcatKernel[float64](o, out, in)
	}
	return nil
}

// seqPoolConcatKernel makes the output rows over the cores, each row
// branch by branch.
func seqPoolConcatKernel[T tensor.Float](o *seqPoolConcatOp, out *tensor.Tensor, in []*tensor.Tensor) {
	y := tensor.Data[T](out)
	if o.work < par.MinWork { // on the caller, without the parallel loop's closures
		seqPoolConcatRows(o, y, in, 0, o.rows)
		return
	}
	par.RowsOf(o.rows, o.work/max(o.rows, 1)+1, seqPoolConcatJob[T]{o: o, y: y, in: in})
}

// seqPoolConcatJob is seqPoolConcatKernel's loop body, a job so that the
// loop allocates nothing.
type seqPoolConcatJob[T tensor.Float] struct {
	o  *seqPoolConcatOp
	y  []T
	in []*tensor.Tensor
}

func (j *seqPoolConcatJob[T]) Range(_, lo, hi int) { seqPoolConcatRows(j.o, j.y, j.in, lo, hi) }

// seqPoolConcatRows makes the output rows [lo, hi).
func seqPoolConcatRows[T tensor.Float](o *seqPoolConcatOp, y []T, in []*tensor.Tensor, lo, hi int) {
	for r := lo; r < hi; r++ {
		for i := range o.branches {
			b := &o.branches[i]
			at := r*o.total + b.col
			branchRow(b, y[at:at+b.width], in, r)
		}
	}
}

// branchRow writes row r of branch b into y.
func branchRow[T tensor.Float](b *poolBranch, y []T, in []*tensor.Tensor, r int) {
	x := tensor.Data[T](in[b.lo])
	src := y
	if b.pool == "" {
		src = x[r*b.width : (r+1)*b.width]
		if b.chain == nil {
			copy(y, src)
		}
	} else {
		poolRow(b, x, y, r)
	}
	if b.chain != nil {
		runStages(b.chain, y, src, in[b.lo:b.hi], r, 0)
	}
}

// poolRow pools sequence r of x [rows, width] into y, as sequence_pool.
func poolRow[T tensor.Float](b *poolBranch, x, y []T, r int) {
	w := b.width
	s, e := b.offsets[r], b.offsets[r+1]
	switch {
	case s == e:
		for c := range y {
			y[c] = T(b.pad)
		}
	case b.pool == ops.SequencePoolFirst:
		copy(y, x[s*w:(s+1)*w])
	case b.pool == ops.SequencePoolLast:
		copy(y, x[(e-1)*w:e*w])
	case b.pool == ops.SequencePoolMax:
		copy(y, x[s*w:(s+1)*w])
		for i := s + 1; i < e; i++ {
			for c, v := range x[i*w : (i+1)*w] {
				if v > y[c] {
					y[c] = v
				}
			}
		}
	default:
		scale := 1.0
		switch b.pool {
		case ops.SequencePoolAverage:
			scale = 1 / float64(e-s)
		case ops.SequencePoolSqrt:
			scale = 1 / math.Sqrt(float64(e-s))
		}
		sumRows(x[s*w:e*w], w, y, scale)
	}
}

// sumBlock is the columns sumRows adds at a time, its float64
// accumulators on the stack.
const sumBlock = 64

// sumRows writes into y the column sums of x [n, w] times scale, summed
// in float64 in row order, so each column's sum is sequence_pool's bit
// for bit. It walks x row by row over a block of columns: the adds of a
// row are independent of each other, where a column at a time would wait
// on each add before the next.
func sumRows[T tensor.Float](x []T, w int, y []T, scale float64) {
	var acc [sumBlock]float64
	for c0 := 0; c0 < w; c0 += sumBlock {
		a := acc[:min(sumBlock, w-c0)]
		clear(a)
		for r := 0; r*w < len(x); r++ {
			row := x[r*w+c0 : r*w+c0+len(a)]
			for c, v := range row {
				a[c] += float64(v)
			}
		}
		for c, v := range a {
			y[c0+c] = T(v * scale)
		}
	}
}

// fuseSeqPoolConcat replaces each concat along axis 1 of [B, D_i] inputs
// of which at least one is a sequence pool's or an elementwise op's
// output read only there by one seqPoolConcatOp: walking back from each
// input, the elementwise ops (each read only by the next), then a
// sequence_pool of a [total, D_i] tensor read only by them, become its
// branch.
func fuseSeqPoolConcat(g *Graph) (int, error) {
	sole := g.soleReader()
	n := 0
	for i, nd := range g.nodes {
		if nd.op.Name() != "concat" || nd.out < 0 {
			continue
		}
		out := g.values[nd.out]
		at, ok := nd.op.(ops.Attributed)
		if !ok || len(out.shape) != 2 || !out.dt.IsFloat() {
			continue
		}
		if ca, ok := at.Attrs().(ops.ConcatAttrs); !ok || (ca.Axis != 1 && ca.Axis != -1) {
			continue
		}
		op := &seqPoolConcatOp{rows: out.shape[0], total: out.shape[1]}
		var ins []Ref
		var labels []string
		var deadNodes []int
		fused := false
		for _, r := range nd.in {
			b, bins, bdead := g.poolBranch(r, i, sole)
			b.col, b.lo = op.branches2cols(), len(ins)
			ins = append(ins, bins...)
			b.hi = len(ins)
			if b.chain != nil || b.pool != "" {
				fused = true
			}
			op.work += b.rows*b.width + op.rows*b.width
			op.branches = append(op.branches, b)
			labels = append(labels, b.label)
			deadNodes = append(deadNodes, bdead...)
		}
		if !fused {
			continue
		}
		op.name = "seqpool_concat[" + strings.Join(labels, ", ") + "]"
		g.nodes[i] = node{op: op, in: ins, out: nd.out}
		for _, k := range deadNodes {
			g.nodes[k].out = -1
		}
		n++
	}
	g.dropDead()
	return n, nil
}

// branches2cols returns the column where the next branch starts.
func (o *seqPoolConcatOp) branches2cols() int {
	if len(o.branches) == 0 {
		return 0
	}
	b := o.branches[len(o.branches)-1]
	return b.col + b.width
}

// poolBranch walks back from r, an input of the concat node at, over the
// elementwise ops and the sequence_pool that only it reads, and returns
// the branch, its inputs (its source first) and the nodes it absorbs.
func (g *Graph) poolBranch(r Ref, at int, sole func(Ref) int) (poolBranch, []Ref, []int) {
	shape := g.values[r].shape
	b := poolBranch{width: shape[1], rows: shape[0]}
	var stages []stage // in reverse order
	var others []Ref
	var absorbed []int
	cur, reader := r, at
	for {
		p := g.producer(cur)
		if p < 0 || sole(cur) != reader {
			break
		}
		nd := g.nodes[p]
		if ops.ElementwiseArity(nd.op) == 0 || g.values[nd.out].dt != g.values[r].dt {
			break
		}
		k := 0
		if !g.values[nd.in[0]].shape.Equal(shape) {
			k = 1
		}
		if !g.values[nd.in[k]].shape.Equal(shape) || (len(nd.in) == 2 && nd.in[0] == nd.in[1]) {
			break
		}
		s := stage{op: nd.op, other: -1}
		if len(nd.in) == 2 {
			s.first, s.other = k == 0, len(others)
			others = append(others, nd.in[1-k])
		}
		stages = append(stages, s)
		absorbed = append(absorbed, p)
		cur, reader = nd.in[k], p
	}
	if p := g.producer(cur); p >= 0 && sole(cur) == reader && g.nodes[p].op.Name() == "sequence_pool" {
		src := g.values[g.nodes[p].in[0]]
		if at, ok := g.nodes[p].op.(ops.Attributed); ok && len(src.shape) == 2 && src.dt == g.values[r].dt {
			if a, ok := at.Attrs().(ops.SequencePoolAttrs); ok {
				b.pool, b.pad, b.offsets, b.rows = a.Pool, a.Pad, a.Offsets, src.shape[0]
				absorbed = append(absorbed, p)
				cur = g.nodes[p].in[0]
			}
		}
	}
	names := []string{}
	if b.pool != "" {
		names = append(names, "pool_"+string(b.pool))
	}
	if len(stages) > 0 {
		// The stages in the order they run; other operands numbered from 1,
		// after the source.
		ordered := make([]stage, len(stages))
		shapes := []tensor.Shape{shape}
		ins := []Ref{cur}
		for i := range stages {
			s := stages[len(stages)-1-i]
			if s.other >= 0 {
				ins = append(ins, others[s.other])
				shapes = append(shapes, g.values[others[s.other]].shape)
				s.other = len(ins) - 1
			}
			ordered[i] = s
			names = append(names, s.op.Name())
		}
		b.chain = newChain(ordered, shape, shapes, 1)
		b.label = strings.Join(names, "+")
		return b, ins, absorbed
	}
	b.label = strings.Join(names, "+")
	if b.label == "" {
		b.label = "copy"
	}
	return b, []Ref{cur}, absorbed
}
