//go:build cuda

package cuda

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// batchNormLauncher is one application of ops.BatchNormOp on the device: batch
// normalisation over axis 1 of x [N, C, ...] (Keras' BatchNormalization,
// TF's FusedBatchNorm), y = gamma·(x - mean)/sqrt(var + eps) + beta. In
// training, mean and var are the batch's (biased variance, summed in
// double) and the moving statistics are updated in place with Keras'
// momentum rule; in inference they are the moving statistics. Forward
// saves each channel's mean and 1/sqrt(var + eps) and keeps references to
// x and gamma, which must stay unchanged until Backward; Free releases the
// saved state.
type batchNormLauncher struct {
	d     *Device
	attrs ops.BatchNormAttrs

	// Saved by Forward.
	n, c, hw     int
	x, gamma     *Buffer
	mean, invStd *Buffer // float64 [C]
}

// batchNormOp returns the op of ops.BatchNormOp(attrs) on the device.
func (d *Device) batchNormOp(attrs ops.BatchNormAttrs) *batchNormLauncher {
	return &batchNormLauncher{d: d, attrs: attrs}
}

// check checks that the inputs are live float32 buffers of the device;
// their shapes and the attributes were checked by ops.Dispatch
// (batchNormOp.Check).
func (o *batchNormLauncher) check(x, gamma, beta, movingMean, movingVar *Buffer) error {
	return o.d.checkInputs("batch_norm", x, gamma, beta, movingMean, movingVar)
}

// Forward returns the normalised x; in training it also updates
// movingMean and movingVar in place.
func (o *batchNormLauncher) Forward(x, gamma, beta, movingMean, movingVar *Buffer) (*Buffer, error) {
	if err := o.check(x, gamma, beta, movingMean, movingVar); err != nil {
		return nil, err
	}
	var y *Buffer
	err := o.d.do(func() error {
		var err error
		if y, err = o.d.newBuffer(tensor.Float32, x.shape); err != nil {
			return err
		}
		return o.forward(x, gamma, beta, movingMean, movingVar, y)
	})
	return done(y, err)
}

// forward saves the state and launches bn_fwd into y, of x's shape, on
// validated inputs; called inside do.
func (o *batchNormLauncher) forward(x, gamma, beta, movingMean, movingVar, y *Buffer) error {
	d := o.d
	o.Free()
	o.n, o.c, o.hw = x.shape[0], x.shape[1], x.shape[2:].Size()
	o.x, o.gamma = x, gamma
	var err error
	if o.mean, err = d.newBuffer(tensor.Float64, tensor.Shape{o.c}); err != nil {
		return err
	}
	if o.invStd, err = d.newBuffer(tensor.Float64, tensor.Shape{o.c}); err != nil {
		return err
	}
	if o.c == 0 {
		return nil
	}
	return d.launch("bn_fwd", rowGrid(o.c), block1, ptr(x), ptr(gamma), ptr(beta), ptr(movingMean), ptr(movingVar),
		ptr(y), ptr(o.mean), ptr(o.invStd), i64(o.n), i64(o.c), i64(o.hw),
		flag(o.attrs.Training), f64(o.attrs.Momentum), f64(o.attrs.Epsilon))
}

// Backward returns the gradients for the upstream gradient gout (of x's
// shape) of the inputs the need flags ask for (x, gamma, beta; nil for the
// others), as ops' batch_norm: through the batch statistics in training,
// through the fixed moving statistics in inference.
func (o *batchNormLauncher) Backward(gout *Buffer, need [3]bool) (dx, dgamma, dbeta *Buffer, err error) {
	const op = "batch_norm"
	in := []*Buffer{o.x, o.gamma, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, nil, nil, err
	}
	d := o.d
	err = d.do(func() error {
		var err error
		if need[0] {
			if dx, err = d.newBuffer(tensor.Float32, o.x.shape); err != nil {
				return err
			}
		}
		if need[1] {
			if dgamma, err = d.newBuffer(tensor.Float32, tensor.Shape{o.c}); err != nil {
				return err
			}
		}
		if need[2] {
			if dbeta, err = d.newBuffer(tensor.Float32, tensor.Shape{o.c}); err != nil {
				return err
			}
		}
		return o.backward(gout, dx, dgamma, dbeta)
	})
	if err != nil {
		freeAll(dx, dgamma, dbeta)
		return nil, nil, nil, err
	}
	return dx, dgamma, dbeta, nil
}

// backward launches bn_bwd into the non-nil outputs; called inside do
// after forward.
func (o *batchNormLauncher) backward(gout, dx, dgamma, dbeta *Buffer) error {
	if o.c == 0 || (dx == nil && dgamma == nil && dbeta == nil) {
		return nil
	}
	return o.d.launch("bn_bwd", rowGrid(o.c), block1, ptr(o.x), ptr(o.gamma), ptr(gout), ptr(o.mean), ptr(o.invStd),
		ptr(dx), ptr(dgamma), ptr(dbeta), i64(o.n), i64(o.c), i64(o.hw), flag(o.attrs.Training))
}

// Free releases the statistics Forward saved.
func (o *batchNormLauncher) Free() {
	freeAll(o.mean, o.invStd)
	o.mean, o.invStd, o.x, o.gamma = nil, nil, nil, nil
}
