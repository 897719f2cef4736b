package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_slice", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SequenceSliceAttrs) Op { return SequenceSliceOp(a.Offsets, a.Starts, a.Lengths) }), CUDA: DeviceKernel})
}

// SequenceSliceAttrs are sequence_slice's attributes: the offsets and each
// sequence's start and length.
type SequenceSliceAttrs struct {
	Offsets []int `json:"offsets"`
	Starts  []int `json:"starts"`
	Lengths []int `json:"lengths"`
}

// SequenceSliceOp returns the op that keeps steps starts[b] to
// starts[b]+lengths[b] of each sequence b of a ragged batch x [total, D...]
// with the given offsets (Paddle's sequence_slice, whose offset and length
// inputs are starts and lengths here). The result is a ragged batch with
// offsets tensor.OffsetsFromLengths(lengths). A start or length that is
// negative or runs past its sequence is an error naming the sequence. The
// gradient puts the upstream rows back at the steps they came from; the
// other steps get zero.
func SequenceSliceOp(offsets, starts, lengths []int) Op {
	offsets, starts, lengths = slices.Clone(offsets), slices.Clone(starts), slices.Clone(lengths)
	return &rowsOp{name: "sequence_slice", attrs: SequenceSliceAttrs{Offsets: offsets, Starts: starts, Lengths: lengths}, plan: func(x *tensor.Tensor) ([]int, error) {
		in := []*tensor.Tensor{x}
		if err := checkOffsets("sequence_slice", in, offsets, x.Dim(0)); err != nil {
			return nil, err
		}
		b := len(offsets) - 1
		if len(starts) != b || len(lengths) != b {
			return nil, Errorf("sequence_slice", in, "%d starts and %d lengths for %d sequences", len(starts), len(lengths), b)
		}
		var src []int
		for i := range b {
			n := offsets[i+1] - offsets[i]
			if starts[i] < 0 || lengths[i] < 0 || starts[i]+lengths[i] > n {
				return nil, Errorf("sequence_slice", in, "sequence %d of length %d: start %d, length %d out of range", i, n, starts[i], lengths[i])
			}
			for r := range lengths[i] {
				src = append(src, offsets[i]+starts[i]+r)
			}
		}
		return src, nil
	}}
}

// SequenceSlice keeps steps starts[b] to starts[b]+lengths[b] of each
// sequence; see SequenceSliceOp.
func SequenceSlice(x *tensor.Tensor, offsets, starts, lengths []int) (*tensor.Tensor, error) {
	return run(SequenceSliceOp(offsets, starts, lengths), x)
}
