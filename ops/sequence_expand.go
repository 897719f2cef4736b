package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_expand", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SequenceAttrs) Op { return SequenceExpandOp(a.Offsets) }), CUDA: DeviceKernel})
}

// SequenceExpandOp returns the op that broadcasts row b of x [B, D...] over
// every step of sequence b of a ragged batch with the given offsets [B+1],
// giving [offsets[B], D...]. This is Paddle's sequence_expand with x of one
// step per sequence (ref_level 0): each row is repeated len_b times, and an
// empty sequence takes none. The gradient of row b sums the upstream rows
// of sequence b (TF: tf.math.segment_sum of the upstream gradient).
func SequenceExpandOp(offsets []int) Op {
	offsets = slices.Clone(offsets)
	return &rowsOp{name: "sequence_expand", attrs: SequenceAttrs{Offsets: offsets}, plan: func(x *tensor.Tensor) ([]int, error) {
		in := []*tensor.Tensor{x}
		if len(offsets) == 0 || len(offsets)-1 != x.Dim(0) {
			return nil, Errorf("sequence_expand", in, "offsets %v describe %d sequences, want one per row of x (%d)", offsets, len(offsets)-1, x.Dim(0))
		}
		if err := checkOffsets("sequence_expand", in, offsets, offsets[len(offsets)-1]); err != nil {
			return nil, err
		}
		src := make([]int, 0, offsets[len(offsets)-1])
		for b := range x.Dim(0) {
			for range offsets[b+1] - offsets[b] {
				src = append(src, b)
			}
		}
		return src, nil
	}}
}

// SequenceExpand repeats row b of x over the steps of sequence b; see
// SequenceExpandOp.
func SequenceExpand(x *tensor.Tensor, offsets []int) (*tensor.Tensor, error) {
	return run(SequenceExpandOp(offsets), x)
}
