//go:build cuda

package cuda

import (
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// poolCodes number the poolings as the SeqPool enum of
// kernels/sequence_pool.cu does.
var poolCodes = map[ops.SequencePoolType]int{
	ops.SequencePoolSum: 0, ops.SequencePoolAverage: 1, ops.SequencePoolSqrt: 2,
	ops.SequencePoolMax: 3, ops.SequencePoolFirst: 4, ops.SequencePoolLast: 5,
}

// sequencePoolLauncher is one application of ops.SequencePoolOp on the device:
// it pools each sequence of a ragged batch x [total, D...] over its steps
// into one row of [B, D...], an empty sequence giving pad. Forward uploads
// the offsets and, for max, saves the row of each output's first maximum;
// Free releases them.
type sequencePoolLauncher struct {
	d       *Device
	kind    ops.SequencePoolType
	pad     float64
	offsets []int

	// Saved by Forward.
	x        *Buffer
	off, arg *Buffer
}

// sequencePoolOp returns the op of ops.SequencePoolOp(kind, pad, offsets)
// on the device.
func (d *Device) sequencePoolOp(kind ops.SequencePoolType, pad float64, offsets []int) *sequencePoolLauncher {
	return &sequencePoolLauncher{d: d, kind: kind, pad: pad, offsets: slices.Clone(offsets)}
}

// Forward pools x; see SequencePool.
func (o *sequencePoolLauncher) Forward(x *Buffer) (*Buffer, error) {
	const op = "sequence_pool"
	in := []*Buffer{x}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	code, ok := poolCodes[o.kind]
	if !ok {
		return nil, opError(op, in, "unknown pool type %q; want sum, average, sqrt, max, first or last", o.kind)
	}
	if err := checkOffsets(op, in, o.offsets, x.shape[0]); err != nil { // x's rank checked by ops.Dispatch
		return nil, err
	}
	off := make([]int64, len(o.offsets))
	for i, v := range o.offsets {
		off[i] = int64(v)
	}
	o.Free()
	o.x = x
	d, batch, inner := o.d, len(o.offsets)-1, x.shape[1:].Size()
	var y *Buffer
	err := d.do(func() error {
		var err error
		if o.off, err = d.newBuffer(tensor.Int64, tensor.Shape{len(off)}); err != nil {
			return err
		}
		if err := d.copyHtoD(o.off, tensor.MustFromSlice(off)); err != nil {
			return err
		}
		if o.kind == ops.SequencePoolMax {
			if o.arg, err = d.newBuffer(tensor.Int64, tensor.Shape{batch * inner}); err != nil {
				return err
			}
		}
		if y, err = d.newBuffer(tensor.Float32, slices.Concat(tensor.Shape{batch}, x.shape[1:])); err != nil || y.Size() == 0 {
			return err
		}
		return d.launch("seqpool_fwd", grid1(batch*inner), block1, i64(code), ptr(x), ptr(o.off), ptr(y), ptr(o.arg),
			i64(batch), i64(inner), f64(o.pad))
	})
	return done(y, err)
}

// Backward returns the gradient of x for the upstream gradient gout
// [B, D...]: sum, average and sqrt spread each row over the steps scaled
// by 1, 1/len and 1/sqrt(len); max, first and last send it to their step;
// empty sequences pass nothing back.
func (o *sequencePoolLauncher) Backward(gout *Buffer) (*Buffer, error) {
	const op = "sequence_pool"
	in := []*Buffer{o.x, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	batch, inner := len(o.offsets)-1, o.x.shape[1:].Size()
	d := o.d
	var dx *Buffer
	err := d.do(func() error {
		var err error
		if dx, err = d.newBuffer(tensor.Float32, o.x.shape); err != nil {
			return err
		}
		if err := d.zero(dx); err != nil || gout.Size() == 0 {
			return err
		}
		return d.launch("seqpool_bwd", grid1(batch*inner), block1, i64(poolCodes[o.kind]), ptr(gout), ptr(o.off), ptr(o.arg),
			ptr(dx), i64(batch), i64(inner))
	})
	return done(dx, err)
}

// Free releases the offsets and arg buffers Forward saved.
func (o *sequencePoolLauncher) Free() {
	freeAll(o.off, o.arg)
	o.off, o.arg, o.x = nil, nil, nil
}

// checkOffsets checks, as ops does, that offsets start at 0, never
// decrease and end at rows.
func checkOffsets(op string, in []*Buffer, offsets []int, rows int) error {
	if len(offsets) == 0 || offsets[0] != 0 {
		return opError(op, in, "offsets %v must start at 0", offsets)
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return opError(op, in, "offsets %v decrease at %d: %d after %d", offsets, i, offsets[i], offsets[i-1])
		}
	}
	if last := offsets[len(offsets)-1]; last != rows {
		return opError(op, in, "offsets %v end at %d but the values have %d rows", offsets, last, rows)
	}
	return nil
}
