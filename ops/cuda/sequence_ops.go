//go:build cuda

package cuda

import (
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// sequenceRowsLauncher is one application on the device of a sequence op whose
// output rows are copies of input rows, over a ragged batch x [rows, D...]
// (see ops/sequence.go): ops.SequenceExpandOp, ops.SequenceReverseOp or
// ops.SequenceSliceOp. The plan (the input row of each output row) is
// made on the host from the offsets; Forward gathers the rows and Backward
// sums the upstream rows back into the rows they came from, in ops' order,
// so a row expanded over many steps gets their sum and a row no output
// took gets zero. Forward keeps a reference to x, which must stay alive
// until Backward.
type sequenceRowsLauncher struct {
	d    *Device
	name string
	plan func(in []*Buffer, rows int) ([]int, error)

	// Saved by Forward.
	src []int
	x   *Buffer
}

// sequenceExpandOp returns ops.SequenceExpandOp(offsets) on the device:
// row b of x [B, D...] repeated over the offsets[b+1]-offsets[b] steps of
// sequence b.
func (d *Device) sequenceExpandOp(offsets []int) *sequenceRowsLauncher {
	offsets = slices.Clone(offsets)
	return &sequenceRowsLauncher{d: d, name: "sequence_expand", plan: func(in []*Buffer, rows int) ([]int, error) {
		const op = "sequence_expand"
		if len(offsets) == 0 || len(offsets)-1 != rows {
			return nil, opError(op, in, "offsets %v describe %d sequences, want one per row of x (%d)", offsets, len(offsets)-1, rows)
		}
		if err := checkOffsets(op, in, offsets, offsets[len(offsets)-1]); err != nil {
			return nil, err
		}
		src := make([]int, 0, offsets[rows])
		for b := range rows {
			for range offsets[b+1] - offsets[b] {
				src = append(src, b)
			}
		}
		return src, nil
	}}
}

// sequenceReverseOp returns ops.SequenceReverseOp(offsets) on the device:
// each sequence reversed in time, the offsets kept.
func (d *Device) sequenceReverseOp(offsets []int) *sequenceRowsLauncher {
	offsets = slices.Clone(offsets)
	return &sequenceRowsLauncher{d: d, name: "sequence_reverse", plan: func(in []*Buffer, rows int) ([]int, error) {
		if err := checkOffsets("sequence_reverse", in, offsets, rows); err != nil {
			return nil, err
		}
		src := make([]int, 0, rows)
		for b := 0; b+1 < len(offsets); b++ {
			for r := offsets[b+1] - 1; r >= offsets[b]; r-- {
				src = append(src, r)
			}
		}
		return src, nil
	}}
}

// sequenceSliceOp returns ops.SequenceSliceOp(offsets, starts, lengths) on
// the device: steps starts[b] to starts[b]+lengths[b] of each sequence b,
// a ragged batch with offsets tensor.OffsetsFromLengths(lengths).
func (d *Device) sequenceSliceOp(offsets, starts, lengths []int) *sequenceRowsLauncher {
	offsets, starts, lengths = slices.Clone(offsets), slices.Clone(starts), slices.Clone(lengths)
	return &sequenceRowsLauncher{d: d, name: "sequence_slice", plan: func(in []*Buffer, rows int) ([]int, error) {
		const op = "sequence_slice"
		if err := checkOffsets(op, in, offsets, rows); err != nil {
			return nil, err
		}
		b := len(offsets) - 1 // starts and lengths checked by ops.Dispatch (the op's Check)
		var src []int
		for i := range b {
			for r := range lengths[i] {
				src = append(src, offsets[i]+starts[i]+r)
			}
		}
		return src, nil
	}}
}

// Forward returns the planned rows of x [rows, D...]; see SequenceRows.
func (o *sequenceRowsLauncher) Forward(x *Buffer) (*Buffer, error) {
	in := []*Buffer{x}
	if err := o.d.checkInputs(o.name, in...); err != nil {
		return nil, err
	}
	src, err := o.plan(in, x.shape[0]) // x's rank checked by ops.Dispatch (the op's Check)
	if err != nil {
		return nil, err
	}
	o.src, o.x = src, x
	d, inner := o.d, x.shape[1:].Size()
	var y *Buffer
	err = d.do(func() error {
		var err error
		if y, err = d.newBuffer(tensor.Float32, slices.Concat(tensor.Shape{len(src)}, x.shape[1:])); err != nil {
			return err
		}
		return d.gatherRows(x, y, int64s(src), inner)
	})
	return done(y, err)
}

// Backward returns the gradient of x for the upstream gradient gout of
// the output's shape: each row of x gets the sum of the upstream rows
// copied from it, zero if none.
func (o *sequenceRowsLauncher) Backward(gout *Buffer) (*Buffer, error) {
	in := []*Buffer{o.x, gout}
	if err := o.d.checkInputs(o.name, in...); err != nil {
		return nil, err
	}
	d, rows, inner := o.d, o.x.shape[0], o.x.shape[1:].Size()
	seg, list := segments(o.src, rows)
	var dx *Buffer
	err := d.do(func() error {
		var err error
		if dx, err = d.newBuffer(tensor.Float32, o.x.shape); err != nil {
			return err
		}
		return d.sumRows(gout, dx, seg, list, nil, inner)
	})
	return done(dx, err)
}

// sequenceConcatLauncher is one application of ops.SequenceConcatOp(offA, offB)
// on the device: two ragged batches a [ta, D...] and b [tb, D...] with the
// same number of sequences joined sequence by sequence, a's steps first.
// The output has the offsets ops.SequenceConcatOffsets(offA, offB).
type sequenceConcatLauncher struct {
	d          *Device
	offA, offB []int

	// Saved by Forward: the output row of each row of a and of b.
	pos  [2][]int64
	a, b *Buffer
}

// sequenceConcatOp returns ops.SequenceConcatOp(offA, offB) on the device.
func (d *Device) sequenceConcatOp(offA, offB []int) *sequenceConcatLauncher {
	return &sequenceConcatLauncher{d: d, offA: slices.Clone(offA), offB: slices.Clone(offB)}
}

// Forward joins a and b; see SequenceConcat.
func (o *sequenceConcatLauncher) Forward(a, b *Buffer) (*Buffer, error) {
	const op = "sequence_concat"
	in := []*Buffer{a, b}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	off, err := ops.SequenceConcatOffsets(o.offA, o.offB) // shapes and offsets checked by ops.Dispatch (sequenceConcatOp.Check)
	if err != nil {
		return nil, err
	}
	o.pos = [2][]int64{make([]int64, 0, a.shape[0]), make([]int64, 0, b.shape[0])}
	for i := 0; i+1 < len(off); i++ {
		la := o.offA[i+1] - o.offA[i]
		for r := off[i]; r < off[i+1]; r++ {
			k := 0
			if r-off[i] >= la {
				k = 1
			}
			o.pos[k] = append(o.pos[k], int64(r))
		}
	}
	o.a, o.b = a, b
	d, inner := o.d, a.shape[1:].Size()
	var y *Buffer
	err = d.do(func() error {
		var err error
		if y, err = d.newBuffer(tensor.Float32, slices.Concat(tensor.Shape{off[len(off)-1]}, a.shape[1:])); err != nil {
			return err
		}
		if err := d.scatterRows(a, y, o.pos[0], inner); err != nil {
			return err
		}
		return d.scatterRows(b, y, o.pos[1], inner)
	})
	return done(y, err)
}

// Backward returns the gradients of a and b that need asks for (nil for
// the others) for the upstream gradient gout: each input row gets the
// upstream row it went to.
func (o *sequenceConcatLauncher) Backward(gout *Buffer, need [2]bool) (da, db *Buffer, err error) {
	const op = "sequence_concat"
	in := []*Buffer{o.a, o.b, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, nil, err
	}
	d, inner := o.d, o.a.shape[1:].Size()
	grads := [2]*Buffer{}
	err = d.do(func() error {
		for k, x := range []*Buffer{o.a, o.b} {
			if !need[k] {
				continue
			}
			var err error
			if grads[k], err = d.newBuffer(tensor.Float32, x.shape); err != nil {
				return err
			}
			if err := d.gatherRows(gout, grads[k], o.pos[k], inner); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		freeAll(grads[:]...)
		return nil, nil, err
	}
	return grads[0], grads[1], nil
}

// sequenceSoftmaxFwd returns ops.SequenceSoftmaxOp(offsets) of x [total] or
// [total, 1] on the device: the softmax over the steps of each sequence,
// stable as Softmax; an empty sequence has no steps.
func (d *Device) sequenceSoftmaxFwd(x *Buffer, offsets []int) (*Buffer, error) {
	return d.seqSoftmax(x, nil, offsets)
}

// sequenceSoftmaxBwd returns dx = y·(dy - Σ dy·y) per sequence for
// SequenceSoftmax's output y and the upstream gradient dy.
func (d *Device) sequenceSoftmaxBwd(y, dy *Buffer, offsets []int) (*Buffer, error) {
	return d.seqSoftmax(y, dy, offsets) // dy of y's shape: the generic op checks gout
}

// seqSoftmax runs the forward kernel on x, or with dy non-nil the
// backward kernel on the output x and dy.
func (d *Device) seqSoftmax(x, dy *Buffer, offsets []int) (*Buffer, error) {
	const op = "sequence_softmax"
	in := []*Buffer{x}
	if dy != nil {
		in = append(in, dy)
	}
	if err := d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	if err := checkOffsets(op, in, offsets, x.shape[0]); err != nil {
		return nil, err
	}
	batch, longest := len(offsets)-1, 0
	for b := range batch {
		longest = max(longest, offsets[b+1]-offsets[b])
	}
	var out *Buffer
	err := d.do(func() error {
		var err error
		if out, err = d.newBuffer(tensor.Float32, x.shape); err != nil || x.Size() == 0 {
			return err
		}
		off, err := d.upIndex(int64s(offsets))
		if err != nil {
			return err
		}
		defer off.Free()
		if dy == nil {
			return d.launch("seqsoftmax_fwd", rowGrid(batch), rowBlock(longest), ptr(x), ptr(off), ptr(out), i64(batch))
		}
		return d.launch("seqsoftmax_bwd", rowGrid(batch), rowBlock(longest), ptr(x), ptr(dy), ptr(off), ptr(out), i64(batch))
	})
	return done(out, err)
}
