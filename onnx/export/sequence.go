package export

import (
	"fmt"
	"math"
	"slices"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The sequence ops over a ragged batch, in the padded form (see the
// package doc): the rows [total, ...] are [batch, seq, ...] with each
// sequence's steps first, and the steps past its length (anything at all)
// are masked out: mask[b, t] = t < lengths[b]. Paddle's sequence_pool
// and sequence_conv (the formulas in ops/sequence_pool.go and
// ops/sequence_conv.go) become:
//   - sum, average, sqrt: ReduceSum over seq of Where(mask, x, 0), divided
//     by the length or its square root;
//   - max: ReduceMax over seq of Where(mask, x, -inf);
//   - first: Gather of step 0; last: ReduceSum of Where(t = length-1, x, 0);
//   - an empty sequence's row is the pool's pad value (Where on length > 0);
//   - sequence_conv: Conv over seq ([batch, D, seq]) of the masked steps, its
//     filter [L·D, out] reordered to ONNX's [out, D, L], padded by
//     -context_start before and context_start+L-1 after (the zeros a window
//     reads outside its sequence); sequence_conv_pool_max pools it with max.
func init() {
	register("sequence_pool", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.SequencePoolAttrs)
		x, err := raggedInput(c, a.Offsets)
		if err != nil {
			return nil, err
		}
		return e.sequencePool(x, a.Pool, a.Pad, c.in[0].Rank()+1, c.in[0].DType())
	})
	register("sequence_conv", func(e *exporter, c call) (*val, error) {
		y, err := e.sequenceConv(c)
		if err != nil {
			return nil, err
		}
		return &val{seq: y.seq, name: e.apply("Transpose", []string{y.name}, attrInts("perm", 0, 2, 1))}, nil
	})
	register("sequence_conv_pool_max", func(e *exporter, c call) (*val, error) {
		y, err := e.sequenceConv(c)
		if err != nil {
			return nil, err
		}
		dt := c.in[0].DType()
		s := y.seq
		m := e.apply("Unsqueeze", []string{e.mask(s), e.ints64(1)}) // [batch, 1, seq]
		w := e.apply("Where", []string{m, y.name, e.scalar(dt, math.Inf(-1))})
		p := e.apply("ReduceMax", []string{w}, attrInts("axes", 2), attrInt("keepdims", 0))
		return e.unlessEmpty(s, p, 2, dt, 0), nil
	})
}

// raggedInput returns the call's input 0, checked to be the rows of a
// ragged batch with the op's offsets.
func raggedInput(c call, offsets []int) (*val, error) {
	x := c.vs[0]
	switch {
	case x.seq == nil:
		return nil, fmt.Errorf("input 0 is not the rows of a ragged input; expected the rows of one passed to Export with its Offsets")
	case !slices.Equal(x.seq.offsets, offsets):
		return nil, fmt.Errorf("offsets %v differ from the ragged input's %v", offsets, x.seq.offsets)
	}
	return x, nil
}

// derive returns the value called key of s, made by mk on first use.
func (e *exporter) derive(s *sequences, key string, mk func() string) string {
	if n, ok := s.derived[key]; ok {
		return n
	}
	n := mk()
	s.derived[key] = n
	return n
}

// steps is the range [0, seq) of s's padded length, int64 [seq].
func (e *exporter) steps(s *sequences) string {
	return e.derive(s, "steps", func() string {
		shape := e.apply("Shape", []string{s.ids})
		n := e.apply("Gather", []string{shape, e.constant(tensor.Scalar(int64(1)))}, attrInt("axis", 0))
		return e.apply("Range", []string{e.constant(tensor.Scalar(int64(0))), n, e.constant(tensor.Scalar(int64(1)))})
	})
}

// mask is s's step mask, BOOL [batch, seq]: t < lengths[b].
func (e *exporter) mask(s *sequences) string {
	return e.derive(s, "mask", func() string {
		t := e.apply("Unsqueeze", []string{e.steps(s), e.ints64(0)})
		l := e.apply("Unsqueeze", []string{s.lengths, e.ints64(1)})
		return e.apply("Less", []string{t, l})
	})
}

// expand returns name (of dims [batch] or [batch, seq]) with ones appended
// up to rank, for broadcasting against a [batch, seq, ...] or
// [batch, ...] value.
func (e *exporter) expand(name string, have, rank int) string {
	if rank <= have {
		return name
	}
	axes := make([]int64, 0, rank-have)
	for a := have; a < rank; a++ {
		axes = append(axes, int64(a))
	}
	return e.apply("Unsqueeze", []string{name, e.ints64(axes...)})
}

// unlessEmpty returns Where(lengths > 0, y, pad) for y of the given rank
// ([batch, ...]): an empty sequence's pooled row is pad.
func (e *exporter) unlessEmpty(s *sequences, y string, rank int, dt tensor.DType, pad float64) *val {
	return &val{batch: true, name: e.apply("Where", []string{e.nonEmpty(s, rank), y, e.scalar(dt, pad)})}
}

// nonEmpty is lengths > 0, BOOL [batch] with ones appended up to rank.
func (e *exporter) nonEmpty(s *sequences, rank int) string {
	n := e.derive(s, "nonempty", func() string {
		return e.apply("Greater", []string{s.lengths, e.constant(tensor.Scalar(int64(0)))})
	})
	return e.expand(n, 1, rank)
}

// sequencePool pools x, the rows of a ragged batch padded to rank, over
// its steps.
func (e *exporter) sequencePool(x *val, pool ops.SequencePoolType, pad float64, rank int, dt tensor.DType) (*val, error) {
	s := x.seq
	m := e.expand(e.mask(s), 2, rank)
	sum := func(keep string) string {
		w := e.apply("Where", []string{keep, x.name, e.scalar(dt, 0)})
		return e.apply("ReduceSum", []string{w, e.ints64(1)}, attrInt("keepdims", 0))
	}
	length := func() string { // the lengths as dt, [batch, 1, ...] against the pooled [batch, ...]
		l := e.apply("Cast", []string{s.lengths}, attrInt("to", int64(elemType(dt))))
		return e.expand(l, 1, rank-1)
	}
	var y string
	switch pool {
	case ops.SequencePoolSum:
		y = sum(m)
	case ops.SequencePoolAverage:
		y = e.apply("Div", []string{sum(m), length()})
	case ops.SequencePoolSqrt:
		y = e.apply("Div", []string{sum(m), e.apply("Sqrt", []string{length()})})
	case ops.SequencePoolMax:
		w := e.apply("Where", []string{m, x.name, e.scalar(dt, math.Inf(-1))})
		y = e.apply("ReduceMax", []string{w}, attrInts("axes", 1), attrInt("keepdims", 0))
	case ops.SequencePoolFirst:
		y = e.apply("Gather", []string{x.name, e.constant(tensor.Scalar(int64(0)))}, attrInt("axis", 1))
	case ops.SequencePoolLast:
		last := e.apply("Sub", []string{s.lengths, e.constant(tensor.Scalar(int64(1)))})
		t := e.apply("Unsqueeze", []string{e.steps(s), e.ints64(0)})
		at := e.apply("Equal", []string{t, e.apply("Unsqueeze", []string{last, e.ints64(1)})})
		y = sum(e.expand(at, 2, rank))
	default:
		return nil, fmt.Errorf("pool %q has no ONNX form here; expected sum, average, sqrt, max, first or last", pool)
	}
	return e.unlessEmpty(s, y, rank-1, dt, pad), nil
}

// sequenceConv writes sequence_conv's convolution and returns it as
// [batch, out, seq] (seq set, though the layout is not yet the rows').
func (e *exporter) sequenceConv(c call) (*val, error) {
	a := c.attrs().(ops.SequenceConvAttrs)
	x, err := raggedInput(c, a.Offsets)
	if err != nil {
		return nil, err
	}
	if len(c.in) > 2 {
		return nil, fmt.Errorf("a trainable padding input; expected zero padding (ONNX's Conv pads with zeros)")
	}
	if !c.vs[1].konst {
		return nil, fmt.Errorf("the filter is computed from the inputs; expected a constant")
	}
	before, after := -a.ContextStart, a.ContextStart+a.ContextLength-1
	if before < 0 || after < 0 {
		return nil, fmt.Errorf("context start %d and length %d put the window wholly after or before its step; expected a window holding the step", a.ContextStart, a.ContextLength)
	}
	dt := c.in[0].DType()
	filter := c.in[1]
	d, out, l := c.in[0].Dim(1), filter.Dim(1), a.ContextLength
	w := tensor.Zeros(dt, out, d, l)
	for o := range out {
		for j := range d {
			for k := range l {
				w.SetAt((o*d+j)*l+k, filter.At((k*d+j)*out+o))
			}
		}
	}
	m := e.expand(e.mask(x.seq), 2, 3)
	xm := e.apply("Where", []string{m, x.name, e.scalar(dt, 0)})
	xt := e.apply("Transpose", []string{xm}, attrInts("perm", 0, 2, 1))
	attrs := []*pb.AttributeProto{attrInts("kernel_shape", int64(l)), attrInts("pads", int64(before), int64(after))}
	return &val{seq: x.seq, name: e.apply("Conv", []string{xt, e.constant(w)}, attrs...)}, nil
}
