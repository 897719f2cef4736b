package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_softmax", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SequenceAttrs) Op { return SequenceSoftmaxOp(a.Offsets) }), CUDA: DeviceKernel})
}

type sequenceSoftmaxOp struct{ offsets []int }

// SequenceSoftmaxOp returns the op that takes the softmax over the steps of
// each sequence of a ragged batch x [total] or [total, 1] with the given
// offsets (Paddle's sequence_softmax), computed stably as SoftmaxOp. The
// output has x's shape; an empty sequence has no steps to fill. The
// gradient is SoftmaxOp's, y·(dy - Σ dy·y), per sequence.
func SequenceSoftmaxOp(offsets []int) Op { return &sequenceSoftmaxOp{offsets: slices.Clone(offsets)} }

// SequenceSoftmax returns the softmax over each sequence's steps; see
// SequenceSoftmaxOp.
func SequenceSoftmax(x *tensor.Tensor, offsets []int) (*tensor.Tensor, error) {
	return run(SequenceSoftmaxOp(offsets), x)
}

func (o *sequenceSoftmaxOp) Name() string { return "sequence_softmax" }

// Check is sequence_softmax's device-free check (Checker).
func (o *sequenceSoftmaxOp) Check(in []*tensor.Tensor) error {
	if _, err := checkShapes("sequence_softmax", in, 1); err != nil {
		return err
	}
	x := in[0]
	if x.Rank() < 1 || x.Rank() > 2 || x.Rank() == 2 && x.Dim(1) != 1 {
		return Errorf("sequence_softmax", in, "want x [total] or [total, 1]")
	}
	return checkOffsets("sequence_softmax", in, o.offsets, x.Dim(0))
}

func (o *sequenceSoftmaxOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := checkFloat("sequence_softmax", in, 1)
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Rank() < 1 || x.Rank() > 2 || x.Rank() == 2 && x.Dim(1) != 1 {
		return nil, Errorf("sequence_softmax", in, "want x [total] or [total, 1]")
	}
	if err := checkOffsets("sequence_softmax", in, o.offsets, x.Dim(0)); err != nil {
		return nil, err
	}
	out := tensor.ZerosLike(x)
	for b := 0; b+1 < len(o.offsets); b++ {
		s, e := o.offsets[b], o.offsets[b+1]
		switch dt {
		case tensor.Float32:
			softmaxKernel(x.Float32s()[s:e], out.Float32s()[s:e], 1, e-s, 1, false)
		case tensor.Float64:
			softmaxKernel(x.Float64s()[s:e], out.Float64s()[s:e], 1, e-s, 1, false)
		}
	}
	return out, nil
}

func (o *sequenceSoftmaxOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	g := tensor.ZerosLike(out)
	for b := 0; b+1 < len(o.offsets); b++ {
		s, e := o.offsets[b], o.offsets[b+1]
		switch out.DType() {
		case tensor.Float32:
			softmaxGrad("softmax", out.Float32s()[s:e], gout.Float32s()[s:e], g.Float32s()[s:e], 1, e-s, 1)
		case tensor.Float64:
			softmaxGrad("softmax", out.Float64s()[s:e], gout.Float64s()[s:e], g.Float64s()[s:e], 1, e-s, 1)
		}
	}
	return []*tensor.Tensor{g}, nil
}
