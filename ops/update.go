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

var updateKernels = map[string]UpdateKernel{}

// RegisterUpdate records, at init time, the update kernel of the device
// kind device. A second registration or a nil kernel is an error.
func RegisterUpdate(device string, k UpdateKernel) error {
	switch {
	case k == nil:
		return fmt.Errorf("ops: RegisterUpdate(%q): nil kernel", device)
	case updateKernels[device] != nil:
		return fmt.Errorf("ops: RegisterUpdate(%q): registered twice", device)
	}
	updateKernels[device] = k
	return nil
}

// UpdateOn returns the update kernel of the device kind device.
func UpdateOn(device string) (UpdateKernel, bool) {
	k, ok := updateKernels[device]
	return k, ok
}
