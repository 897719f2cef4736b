package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// SequenceAttrs are the attributes of a ragged sequence op that has no
// other: the offsets of its ragged input (sequence q is rows Offsets[q] to
// Offsets[q+1]).
type SequenceAttrs struct {
	Offsets []int `json:"offsets"`
}

// The sequence ops work on ragged batches (Paddle's level-1 LoD; see
// tensor.Ragged): values [total_steps, D...] hold every step of every
// sequence and sequence b is rows offsets[b] to offsets[b+1]. The offsets
// are an op attribute, not an input: they are structure, never data, and
// have no gradient. Each op validates them against its values with
// checkOffsets. Empty sequences (offsets[b] == offsets[b+1]) are allowed
// everywhere.

// checkOffsets checks that offsets start at 0, never decrease and end at
// rows, the number of rows of the values they index; the error names op,
// its inputs and the offending offsets.
func checkOffsets(op string, in []*tensor.Tensor, offsets []int, rows int) error {
	if len(offsets) == 0 || offsets[0] != 0 {
		return Errorf(op, in, "offsets %v must start at 0", offsets)
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return Errorf(op, in, "offsets %v decrease at %d: %d after %d", offsets, i, offsets[i], offsets[i-1])
		}
		if offsets[i] > rows {
			return Errorf(op, in, "offsets %v overrun the values: offset %d is %d but the values have %d rows", offsets, i, offsets[i], rows)
		}
	}
	if last := offsets[len(offsets)-1]; last != rows {
		return Errorf(op, in, "offsets %v end at %d but the values have %d rows", offsets, last, rows)
	}
	return nil
}

// rowsOp is the shared body of the sequence ops whose output rows are
// copies of input rows (sequence_expand, sequence_reverse,
// sequence_slice): plan validates the input and returns, for each output
// row, the input row it copies. Forward gathers the rows; Backward
// scatter-adds the upstream rows back, so a row copied several times
// (sequence_expand) sums its gradients.
type rowsOp struct {
	name  string
	attrs any // the typed attributes (offsets, starts, lengths) that plan reads, for Attrs
	plan  func(x *tensor.Tensor) ([]int, error)
	src   []int // Forward's plan, for Backward
}

func (o *rowsOp) Name() string { return o.name }

// Check is the row-moving sequence ops' device-free check (Checker): the
// values' rank, and the plan of the offsets (starts, lengths) for its rows.
func (o *rowsOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes(o.name, in, 1); err != nil {
		return err
	}
	if in[0].Rank() < 1 {
		return Errorf(o.name, in, "want values [rows, D...] of rank >= 1")
	}
	_, err := o.plan(in[0])
	return err
}

func (o *rowsOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat(o.name, in, 1)
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Rank() < 1 {
		return nil, Errorf(o.name, in, "want values [rows, D...] of rank >= 1")
	}
	if o.src, err = o.plan(x); err != nil {
		return nil, err
	}
	shape := slices.Concat(tensor.Shape{len(o.src)}, x.Shape()[1:])
	out := tensor.Zeros(dt, shape...)
	n, inner := x.Dim(0), x.Shape()[1:].Size()
	switch dt {
	case tensor.Float32:
		gatherKernel(x.Float32s(), out.Float32s(), o.src, 1, n, inner)
	case tensor.Float64:
		gatherKernel(x.Float64s(), out.Float64s(), o.src, 1, n, inner)
	}
	return out, nil
}

func (o *rowsOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g := tensor.ZerosLike(in[0])
	n, inner := in[0].Dim(0), in[0].Shape()[1:].Size()
	switch g.DType() {
	case tensor.Float32:
		gatherGrad(gout.Float32s(), g.Float32s(), o.src, 1, n, inner)
	case tensor.Float64:
		gatherGrad(gout.Float64s(), g.Float64s(), o.src, 1, n, inner)
	}
	return []*tensor.Tensor{g}, nil
}
