package ops

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_concat", Inputs: []string{"a", "b"}, Grads: []int{0, 1},
		Make: MakeOp(func(a SequenceConcatAttrs) Op { return SequenceConcatOp(a.Offsets, a.OffsetsB) }), CUDA: DeviceKernel})
}

// SequenceConcatAttrs are sequence_concat's attributes: the offsets of a
// and of b.
type SequenceConcatAttrs struct {
	Offsets  []int `json:"offsets"`
	OffsetsB []int `json:"offsets_b"`
}

type sequenceConcatOp struct {
	offA, offB []int
	pos        [2][]int // Forward's output row of each row of a and of b
}

// SequenceConcatOp returns the op that joins two ragged batches of the same
// number of sequences, a [ta, D...] with offsets offA and b [tb, D...] with
// offsets offB, sequence by sequence along time: output sequence i is a's
// sequence i followed by b's (Paddle's sequence_concat). The output has
// ta+tb rows and the offsets SequenceConcatOffsets(offA, offB). Each input
// row's gradient is the upstream row it went to.
func SequenceConcatOp(offA, offB []int) Op {
	return &sequenceConcatOp{offA: slices.Clone(offA), offB: slices.Clone(offB)}
}

// SequenceConcat joins a and b sequence by sequence; see SequenceConcatOp.
func SequenceConcat(a, b *tensor.Tensor, offA, offB []int) (*tensor.Tensor, error) {
	return run(SequenceConcatOp(offA, offB), a, b)
}

// SequenceConcatOffsets returns the offsets of the concatenation of ragged
// batches with offsets offA and offB: offA[i] + offB[i].
func SequenceConcatOffsets(offA, offB []int) ([]int, error) {
	if len(offA) != len(offB) {
		return nil, fmt.Errorf("sequence_concat: offsets %v and %v describe different numbers of sequences", offA, offB)
	}
	out := make([]int, len(offA))
	for i := range offA {
		out[i] = offA[i] + offB[i]
	}
	return out, nil
}

func (o *sequenceConcatOp) Name() string { return "sequence_concat" }

// Check is sequence_concat's device-free check (Checker).
func (o *sequenceConcatOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("sequence_concat", in, 2); err != nil {
		return err
	}
	a, b := in[0], in[1]
	if a.Rank() < 1 || b.Rank() < 1 || !a.Shape()[1:].Equal(b.Shape()[1:]) {
		return Errorf("sequence_concat", in, "want a [ta, D...] and b [tb, D...] with the same D...")
	}
	if err := checkOffsets("sequence_concat", in, o.offA, a.Dim(0)); err != nil {
		return err
	}
	if err := checkOffsets("sequence_concat", in, o.offB, b.Dim(0)); err != nil {
		return err
	}
	if _, err := SequenceConcatOffsets(o.offA, o.offB); err != nil {
		return Errorf("sequence_concat", in, "offsets %v and %v describe different numbers of sequences", o.offA, o.offB)
	}
	return nil
}

func (o *sequenceConcatOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("sequence_concat", in, 2)
	if err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	if a.Rank() < 1 || b.Rank() < 1 || !a.Shape()[1:].Equal(b.Shape()[1:]) {
		return nil, Errorf("sequence_concat", in, "want a [ta, D...] and b [tb, D...] with the same D...")
	}
	if err := checkOffsets("sequence_concat", in, o.offA, a.Dim(0)); err != nil {
		return nil, err
	}
	if err := checkOffsets("sequence_concat", in, o.offB, b.Dim(0)); err != nil {
		return nil, err
	}
	off, err := SequenceConcatOffsets(o.offA, o.offB)
	if err != nil {
		return nil, Errorf("sequence_concat", in, "offsets %v and %v describe different numbers of sequences", o.offA, o.offB)
	}
	o.pos = [2][]int{make([]int, 0, a.Dim(0)), make([]int, 0, b.Dim(0))}
	for i := 0; i+1 < len(off); i++ {
		la := o.offA[i+1] - o.offA[i]
		for r := off[i]; r < off[i+1]; r++ {
			if r-off[i] < la {
				o.pos[0] = append(o.pos[0], r)
			} else {
				o.pos[1] = append(o.pos[1], r)
			}
		}
	}
	total := off[len(off)-1]
	out := tensor.Zeros(dt, slices.Concat(tensor.Shape{total}, a.Shape()[1:])...)
	inner := a.Shape()[1:].Size()
	for k, x := range in { // scatter each input's rows to their output rows
		switch dt {
		case tensor.Float32:
			gatherGrad(x.Float32s(), out.Float32s(), o.pos[k], 1, total, inner)
		case tensor.Float64:
			gatherGrad(x.Float64s(), out.Float64s(), o.pos[k], 1, total, inner)
		}
	}
	return out, nil
}

func (o *sequenceConcatOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 2)
	inner := in[0].Shape()[1:].Size()
	for k, x := range in {
		if !need[k] {
			continue
		}
		grads[k] = tensor.ZerosLike(x)
		switch x.DType() {
		case tensor.Float32:
			gatherKernel(gout.Float32s(), grads[k].Float32s(), o.pos[k], 1, out.Dim(0), inner)
		case tensor.Float64:
			gatherKernel(gout.Float64s(), grads[k].Float64s(), o.pos[k], 1, out.Dim(0), inner)
		}
	}
	return grads, nil
}
