package ops

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// Update is one step of an optimizer's rule for one parameter, with the
// step's coefficients, as package optim computes them (see its
// constructors for each rule's formula, TensorFlow's). It is how optim
// runs its rules on a device without knowing the device: the device
// package registers an UpdateKernel that applies it.
type Update struct {
	// Rule is "sgd", "momentum", "adam", "rmsprop" or "adagrad".
	Rule string
	// LR is the step's learning rate; for adam, the bias-corrected
	// lr·sqrt(1-beta2^t)/(1-beta1^t).
	LR float64
	// L2 adds L2·v to the gradient before the rule; Decay (AdamW) first
	// sets v -= Decay·v, with Decay the step's lr·weight decay.
	L2, Decay float64

	Beta1, Beta2, Epsilon, Momentum, Rho float64
	Nesterov, Centered                   bool
}

// UpdateKernel applies u to the parameter v, on a device, with its
// gradient g and the rule's slots in optim's order (momentum: the
// accumulator; adam: m, v; rmsprop: ms, then mom when Momentum > 0, then mg
// when Centered; adagrad: the accumulator), all of v's device, dtype and
// shape, updated in place.
type UpdateKernel func(u Update, v, g *tensor.Tensor, slots []*tensor.Tensor) error

// ClipKernel adds L2·v into each gradient g (when l2 > 0) and then scales
// the gradients, on a device, so that their global norm is at most
// maxNorm (tf.clip_by_global_norm), in place: values and grads pair up,
// all float tensors on one device.
type ClipKernel func(values, grads []*tensor.Tensor, l2, maxNorm float64) error

// deviceUpdate is what a device registered for optim.
type deviceUpdate struct {
	update UpdateKernel
	clip   ClipKernel
}

var updateKernels = map[string]deviceUpdate{}

// RegisterUpdate records, at init time, the update kernel of the device
// kind device and its gradient clipping (nil: none, and optim's
// GlobalClipNorm is an error there). A second registration or a nil
// update is an error.
func RegisterUpdate(device string, update UpdateKernel, clip ClipKernel) error {
	switch {
	case update == nil:
		return fmt.Errorf("ops: RegisterUpdate(%q): nil kernel", device)
	case updateKernels[device].update != nil:
		return fmt.Errorf("ops: RegisterUpdate(%q): registered twice", device)
	}
	updateKernels[device] = deviceUpdate{update, clip}
	return nil
}

// UpdateOn returns the update kernel of the device kind device and its
// clipping (nil when it registered none); ok is false when it registered
// nothing.
func UpdateOn(device string) (update UpdateKernel, clip ClipKernel, ok bool) {
	k, ok := updateKernels[device]
	return k.update, k.clip, ok
}
