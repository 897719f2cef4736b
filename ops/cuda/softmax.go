//go:build cuda

package cuda

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// softmaxFwd returns softmax(x) along axis, as ops.SoftmaxOp: stable, with
// the row maximum subtracted, over any axis (negative counts from the
// end).
func (d *Device) softmaxFwd(x *Buffer, axis int) (*Buffer, error) {
	return d.softmax("softmax", x, nil, axis)
}

// logSoftmaxFwd returns log(softmax(x)) along axis, as ops.LogSoftmaxOp:
// shifted - log Σ exp(shifted) with shifted = x - max.
func (d *Device) logSoftmaxFwd(x *Buffer, axis int) (*Buffer, error) {
	return d.softmax("log_softmax", x, nil, axis)
}

// softmaxBwd returns dx = y·(dy - Σ dy·y) along axis for softmax's output
// y and upstream gradient dy.
func (d *Device) softmaxBwd(y, dy *Buffer, axis int) (*Buffer, error) {
	return d.softmax("softmax", y, dy, axis)
}

// logSoftmaxBwd returns dx = dy - exp(y)·Σ dy along axis for
// log-softmax's output y and upstream gradient dy.
func (d *Device) logSoftmaxBwd(y, dy *Buffer, axis int) (*Buffer, error) {
	return d.softmax("log_softmax", y, dy, axis)
}

// softmax runs the forward kernel of op on x, or with dy non-nil the
// backward kernel on the output x and dy.
func (d *Device) softmax(op string, x, dy *Buffer, axis int) (*Buffer, error) {
	in := []*Buffer{x}
	if dy != nil {
		in = append(in, dy)
	}
	if err := d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	ax, err := tensor.Axis(axis, len(x.shape)) // in range: ops.Dispatch checked it (softmaxOp.Check)
	if err != nil {
		return nil, err
	}
	outer, n, inner := x.shape[:ax].Size(), x.shape[ax], x.shape[ax+1:].Size()
	var out *Buffer
	err = d.do(func() error {
		var err error
		if out, err = d.newBuffer(x.dtype, x.shape); err != nil || x.Size() == 0 {
			return err
		}
		rows, log := outer*inner, flag(op == "log_softmax")
		if dy == nil {
			return d.launch("softmax_fwd", rowGrid(rows), rowBlock(n), ptr(x), ptr(out), i64(outer), i64(n), i64(inner), log)
		}
		return d.launch("softmax_bwd", rowGrid(rows), rowBlock(n), ptr(x), ptr(dy), ptr(out), i64(outer), i64(n), i64(inner), log)
	})
	return done(out, err)
}

// softmaxXentLauncher is one application of the fused softmax cross-entropy of
// ops.SoftmaxCrossEntropyOp (integer labels) or ops.SoftmaxCrossEntropySoftOp
// (probability labels) on the device. Forward saves each row's max and
// log-sum-exp and keeps references to its inputs, which must stay
// unchanged until Backward; Free releases the saved state.
type softmaxXentLauncher struct {
	d    *Device
	r    ops.LossReduction
	soft bool

	// Saved by Forward.
	n, c           int
	logits, labels *Buffer // labels: the soft labels, or the int32 class labels
	rowMax, logSum *Buffer
}

// softmaxXentOp returns the op of ops.SoftmaxCrossEntropyOp with
// reduction r on the device; run it with Forward.
func (d *Device) softmaxXentOp(r ops.LossReduction) *softmaxXentLauncher {
	return &softmaxXentLauncher{d: d, r: r}
}

// softmaxXentSoftOp returns the op of ops.SoftmaxCrossEntropySoftOp
// with reduction r on the device; run it with ForwardSoft.
func (d *Device) softmaxXentSoftOp(r ops.LossReduction) *softmaxXentLauncher {
	return &softmaxXentLauncher{d: d, r: r, soft: true}
}

func (o *softmaxXentLauncher) name() string {
	if o.soft {
		return "softmax_cross_entropy_soft"
	}
	return "softmax_cross_entropy"
}

// Forward returns the loss of logits [N, C] with int32 or int64 class
// labels [N] in [0, C), given on the host: they are checked there, with
// ops' error for a label out of range, and uploaded as int32.
func (o *softmaxXentLauncher) Forward(logits *Buffer, labels *tensor.Tensor) (*Buffer, error) {
	in := []*Buffer{logits}
	if o.soft {
		return nil, opError(o.name(), in, "the soft-label op takes its labels on the device; use ForwardSoft")
	}
	if err := o.checkLogits(in); err != nil {
		return nil, err
	}
	n, c := logits.shape[0], logits.shape[1] // the labels' dtype and shape were checked by ops.Dispatch
	ls, err := labels.Ints()
	if err != nil {
		return nil, err
	}
	host := make([]int32, n)
	for i, l := range ls {
		if l < 0 || l >= c {
			return nil, opError(o.name(), in, "label %d at row %d out of range [0, %d)", l, i, c)
		}
		host[i] = int32(l)
	}
	lab, err := o.d.Upload(tensor.MustFromSlice(host))
	if err != nil {
		return nil, err
	}
	return o.forward(logits, lab)
}

// ForwardSoft returns the loss of logits [N, C] with probability labels
// [N, C] on the device.
func (o *softmaxXentLauncher) ForwardSoft(logits, labels *Buffer) (*Buffer, error) {
	in := []*Buffer{logits, labels}
	if !o.soft {
		return nil, opError(o.name(), in, "the integer-label op takes its labels on the host; use Forward")
	}
	if err := o.checkLogits(in); err != nil {
		return nil, err
	}
	return o.forward(logits, labels)
}

// checkLogits checks that the inputs are live float32 buffers of the
// device; the reduction, the logits' rank and the labels' shape were
// checked by ops.Dispatch (softmaxXentOp.Check).
func (o *softmaxXentLauncher) checkLogits(in []*Buffer) error {
	return o.d.checkInputs(o.name(), in...)
}

// forward runs xent_fwd and the reduction; the op owns an int32 labels
// buffer from Forward.
func (o *softmaxXentLauncher) forward(logits, labels *Buffer) (*Buffer, error) {
	d := o.d
	o.Free()
	o.n, o.c, o.logits, o.labels = logits.shape[0], logits.shape[1], logits, labels
	var loss *Buffer
	err := d.do(func() error {
		var err error
		if o.rowMax, err = d.newBuffer(tensor.Float32, tensor.Shape{o.n}); err != nil {
			return err
		}
		if o.logSum, err = d.newBuffer(tensor.Float32, tensor.Shape{o.n}); err != nil {
			return err
		}
		perRow, err := d.newBuffer(tensor.Float32, tensor.Shape{o.n})
		if err != nil {
			return err
		}
		soft, ints := o.softLabels()
		if o.c == 0 {
			err = d.zero(perRow) // soft labels over no classes: every loss is 0
		} else if o.n > 0 {
			err = d.launch("xent_fwd", rowGrid(o.n), rowBlock(o.c), ptr(logits), ptr(ints), ptr(soft),
				i64(o.n), i64(o.c), ptr(o.rowMax), ptr(o.logSum), ptr(perRow))
		}
		if err != nil {
			perRow.Free()
			return err
		}
		if o.r == ops.LossNone {
			loss = perRow
			return nil
		}
		defer perRow.Free()
		if loss, err = d.newBuffer(tensor.Float32, tensor.Shape{}); err != nil {
			return err
		}
		scale := 1.0
		if o.r == ops.LossMean && o.n > 0 {
			scale = 1 / float64(o.n)
		}
		return d.launch("sum_all", [3]int{1, 1, 1}, block1, ptr(perRow), ptr(loss), i64(o.n), f64(scale))
	})
	return done(loss, err)
}

// softLabels returns the labels as the kernels take them: soft labels
// or integer labels, the other nil.
func (o *softmaxXentLauncher) softLabels() (soft, ints *Buffer) {
	if o.soft {
		return o.labels, nil
	}
	return nil, o.labels
}

// Backward returns the gradients for the upstream gradient gout of the
// loss (of the loss's shape): the logits' gradient, and for the soft op
// when needLabels the labels' gradient -log softmax(z) times gout.
func (o *softmaxXentLauncher) Backward(gout *Buffer, needLabels bool) (dlogits, dlabels *Buffer, err error) {
	in := []*Buffer{o.logits, gout}
	if err := o.d.checkInputs(o.name(), in...); err != nil {
		return nil, nil, err
	}
	d := o.d
	err = d.do(func() error {
		var err error
		if dlogits, err = d.newBuffer(tensor.Float32, o.logits.shape); err != nil {
			return err
		}
		if o.soft && needLabels {
			if dlabels, err = d.newBuffer(tensor.Float32, o.logits.shape); err != nil {
				return err
			}
		}
		if o.n == 0 || o.c == 0 {
			return nil
		}
		scale := 1.0
		if o.r == ops.LossMean {
			scale = 1 / float64(o.n)
		}
		soft, ints := o.softLabels()
		return d.launch("xent_bwd", rowGrid(o.n), rowBlock(o.c), ptr(o.logits), ptr(ints), ptr(soft), i64(o.n), i64(o.c),
			ptr(o.rowMax), ptr(o.logSum), ptr(gout), flag(o.r == ops.LossNone), f64(scale), ptr(dlogits), ptr(dlabels))
	})
	if err != nil {
		freeAll(dlogits, dlabels)
		return nil, nil, err
	}
	return dlogits, dlabels, nil
}

// Free releases the state Forward saved (and the uploaded integer labels).
func (o *softmaxXentLauncher) Free() {
	freeAll(o.rowMax, o.logSum)
	if !o.soft {
		freeAll(o.labels)
	}
	o.rowMax, o.logSum, o.labels, o.logits = nil, nil, nil, nil
}
