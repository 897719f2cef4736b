package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_reverse", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SequenceAttrs) Op { return SequenceReverseOp(a.Offsets) }), CUDA: DeviceKernel})
}

// SequenceReverseOp returns the op that reverses each sequence of a ragged
// batch x [total, D...] with the given offsets in time, keeping the
// offsets (Paddle's sequence_reverse; TF's tf.reverse_sequence on the
// padded form). The gradient reverses the upstream gradient the same way.
func SequenceReverseOp(offsets []int) Op {
	offsets = slices.Clone(offsets)
	return &rowsOp{name: "sequence_reverse", attrs: SequenceAttrs{Offsets: offsets}, plan: func(x *tensor.Tensor) ([]int, error) {
		if err := checkOffsets("sequence_reverse", []*tensor.Tensor{x}, offsets, x.Dim(0)); err != nil {
			return nil, err
		}
		src := make([]int, 0, x.Dim(0))
		for b := 0; b+1 < len(offsets); b++ {
			for r := offsets[b+1] - 1; r >= offsets[b]; r-- {
				src = append(src, r)
			}
		}
		return src, nil
	}}
}

// SequenceReverse reverses each sequence of x in time; see SequenceReverseOp.
func SequenceReverse(x *tensor.Tensor, offsets []int) (*tensor.Tensor, error) {
	return run(SequenceReverseOp(offsets), x)
}
