package ops

import (
	"math"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_pool", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SequencePoolAttrs) Op { return SequencePoolOp(a.Pool, a.Pad, a.Offsets) }), CUDA: DeviceKernel})
}

// SequencePoolAttrs are sequence_pool's attributes: the pooling, the value
// of an empty sequence's row and the offsets.
type SequencePoolAttrs struct {
	Pool    SequencePoolType `json:"pool"`
	Pad     float64          `json:"pad"`
	Offsets []int            `json:"offsets"`
}

// SequencePoolType names a sequence pooling (Paddle's sequence_pool
// pooltype, lower-cased).
type SequencePoolType string

// The sequence poolings.
const (
	SequencePoolSum     SequencePoolType = "sum"     // Σ steps (tf.math.segment_sum)
	SequencePoolAverage SequencePoolType = "average" // Σ steps / len (tf.math.segment_mean)
	SequencePoolSqrt    SequencePoolType = "sqrt"    // Σ steps / sqrt(len) (tf.math.segment_sum / sqrt(len))
	SequencePoolMax     SequencePoolType = "max"     // elementwise max over steps (tf.math.segment_max)
	SequencePoolFirst   SequencePoolType = "first"   // the first step
	SequencePoolLast    SequencePoolType = "last"    // the last step
)

type sequencePoolOp struct {
	kind    SequencePoolType
	pad     float64
	offsets []int
	arg     []int // max: Forward's row of the maximum of each output element
}

// SequencePoolOp returns the op that pools each sequence of a ragged batch
// x [total, D...] with the given offsets over its steps into one row,
// giving [B, D...] (Paddle's sequence_pool; TF's segment ops are the
// parity reference). An empty sequence yields pad in every element (Paddle's
// pad_value; 0 is the usual choice) and passes no gradient back. Gradients:
// sum, average and sqrt spread the upstream row over the steps scaled by 1,
// 1/len and 1/sqrt(len); max sends each element's gradient to the step that
// holds the maximum, the first one on ties (Paddle's MaxSeqPoolGradFunctor,
// unlike TF's segment_max, which splits it among the ties); first and last
// send it to their step.
func SequencePoolOp(kind SequencePoolType, pad float64, offsets []int) Op {
	return &sequencePoolOp{kind: kind, pad: pad, offsets: slices.Clone(offsets)}
}

// SequencePool pools each sequence of x into one row; see SequencePoolOp.
func SequencePool(x *tensor.Tensor, offsets []int, kind SequencePoolType, pad float64) (*tensor.Tensor, error) {
	return run(SequencePoolOp(kind, pad, offsets), x)
}

func (o *sequencePoolOp) Name() string { return "sequence_pool" }

// Check is sequence_pool's device-free check (Checker).
func (o *sequencePoolOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("sequence_pool", in, 1); err != nil {
		return err
	}
	x := in[0]
	switch o.kind {
	case SequencePoolSum, SequencePoolAverage, SequencePoolSqrt, SequencePoolMax, SequencePoolFirst, SequencePoolLast:
	default:
		return Errorf("sequence_pool", in, "unknown pool type %q; want sum, average, sqrt, max, first or last", o.kind)
	}
	if x.Rank() < 1 {
		return Errorf("sequence_pool", in, "want x [total, D...] of rank >= 1")
	}
	return checkOffsets("sequence_pool", in, o.offsets, x.Dim(0))
}

// validate checks Forward's input and returns its dtype.
func (o *sequencePoolOp) validate(in []*tensor.Tensor) (tensor.DType, error) {
	dt, err := checkFloat("sequence_pool", in, 1)
	if err != nil {
		return 0, err
	}
	return dt, o.Check(in)
}

func (o *sequencePoolOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := o.validate(in)
	if err != nil {
		return nil, err
	}
	x := in[0]
	out := tensor.Zeros(dt, slices.Concat(tensor.Shape{len(o.offsets) - 1}, x.Shape()[1:])...)
	inner := x.Shape()[1:].Size()
	switch dt {
	case tensor.Float32:
		o.arg = seqPoolKernel(o.kind, o.pad, o.offsets, inner, x.Float32s(), out.Float32s())
	case tensor.Float64:
		o.arg = seqPoolKernel(o.kind, o.pad, o.offsets, inner, x.Float64s(), out.Float64s())
	}
	return out, nil
}

// seqScale is the factor by which sum, average and sqrt scale the sum of n
// steps.
func seqScale(kind SequencePoolType, n int) float64 {
	switch kind {
	case SequencePoolAverage:
		return 1 / float64(n)
	case SequencePoolSqrt:
		return 1 / math.Sqrt(float64(n))
	}
	return 1
}

// seqPoolKernel pools x [total, inner] into y [B, inner]; for max it
// returns the row of each output element's (first) maximum.
func seqPoolKernel[T tensor.Float](kind SequencePoolType, pad float64, off []int, inner int, x, y []T) []int {
	var arg []int
	if kind == SequencePoolMax {
		arg = make([]int, len(y))
	}
	seqPoolInto(kind, pad, off, inner, x, y, arg)
	return arg
}

// seqPoolInto is seqPoolKernel writing max's rows into arg [len(y)] (nil
// for the other kinds).
func seqPoolInto[T tensor.Float](kind SequencePoolType, pad float64, off []int, inner int, x, y []T, arg []int) {
	for b := 0; b+1 < len(off); b++ {
		s, e := off[b], off[b+1]
		row := y[b*inner : (b+1)*inner]
		if s == e {
			for c := range row {
				row[c] = T(pad)
			}
			continue
		}
		if kind == SequencePoolMax {
			seqMaxRows(x[s*inner:e*inner], inner, s, row, arg[b*inner:(b+1)*inner])
			continue
		}
		for c := range row {
			switch kind {
			case SequencePoolFirst:
				row[c] = x[s*inner+c]
			case SequencePoolLast:
				row[c] = x[(e-1)*inner+c]
			default:
				acc := 0.0
				for r := s; r < e; r++ {
					acc += float64(x[r*inner+c])
				}
				row[c] = T(acc * seqScale(kind, e-s))
			}
		}
	}
}

// seqMaxRows writes into row the column maxima of the rows of x [n, inner]
// and into arg the row (counted from first) of each column's first
// maximum. It walks x row by row, so every pass reads contiguous memory.
func seqMaxRows[T tensor.Float](x []T, inner, first int, row []T, arg []int) {
	copy(row, x[:inner])
	for c := range arg {
		arg[c] = first
	}
	for r := 1; r*inner < len(x); r++ {
		cur := x[r*inner : (r+1)*inner]
		for c, v := range cur[:len(row)] {
			if v > row[c] {
				row[c], arg[c] = v, first+r
			}
		}
	}
}

func (o *sequencePoolOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g := tensor.ZerosLike(in[0])
	inner := in[0].Shape()[1:].Size()
	switch g.DType() {
	case tensor.Float32:
		seqPoolGrad(o.kind, o.offsets, o.arg, inner, gout.Float32s(), g.Float32s())
	case tensor.Float64:
		seqPoolGrad(o.kind, o.offsets, o.arg, inner, gout.Float64s(), g.Float64s())
	}
	return []*tensor.Tensor{g}, nil
}

// seqPoolGrad writes the gradient g [total, inner] of the pooling for the
// upstream gradient gy [B, inner]; empty sequences have no steps to reach.
func seqPoolGrad[T tensor.Float](kind SequencePoolType, off, arg []int, inner int, gy, g []T) {
	for b := 0; b+1 < len(off); b++ {
		s, e := off[b], off[b+1]
		if s == e {
			continue
		}
		for c := 0; c < inner; c++ {
			d := gy[b*inner+c]
			switch kind {
			case SequencePoolFirst:
				g[s*inner+c] = d
			case SequencePoolLast:
				g[(e-1)*inner+c] = d
			case SequencePoolMax:
				g[arg[b*inner+c]*inner+c] = d
			default:
				v := T(float64(d) * seqScale(kind, e-s))
				for r := s; r < e; r++ {
					g[r*inner+c] = v
				}
			}
		}
	}
}
