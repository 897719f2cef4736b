package graph

import (
	"errors"

	"github.com/plumbml/plumb/tensor"
)

// Value is a tensor computed on a tape, or the error that stopped it.
type Value struct {
	tape         *Tape
	gen          uint64 // the tape's step that made it
	t            *tensor.Tensor
	err          error
	requiresGrad bool
	grad         *tensor.Tensor
	ownGrad      bool // grad is a sum Backward made for this value alone, so later terms are added into it
	gradAt       int  // grad's place in its tape's grads, plus one; 0 when it is not there
	param        *Param
	paramVersion uint64 // param's version when the tape read it (claim.go)
	made         bool   // t is an op's output, which Release may recycle
	kept         bool   // t or grad was handed to a caller: never recycled
}

// released reports whether v's tape has been released since v was made.
func (v *Value) released() bool { return v != nil && v.tape != nil && v.gen != v.tape.gen }

// errNilValue and errZeroValue are the errors of a nil *Value and of a
// Value that no tape made (a zero Value{} or new(Value)).
var (
	errNilValue  = errors.New("graph: nil value")
	errZeroValue = errors.New("graph: zero Value, made by no tape (use Tape.Const, Var or Param)")
)

// Tensor returns the computed tensor, or the error that failed this value.
// The tensor stays valid after Tape.Release (Release never reuses a tensor
// it handed out); the value itself does not.
func (v *Value) Tensor() (*tensor.Tensor, error) {
	if err := v.Err(); err != nil {
		return nil, err
	}
	v.kept = true
	return v.t, nil
}

// Host returns the computed tensor in host memory: as Tensor for a value
// on the host, else a copy, while the device storage stays the step's, so
// Release frees it. It is how a loop reads a model's outputs (logits for
// an accuracy) whatever the model's device.
func (v *Value) Host() (*tensor.Tensor, error) {
	if err := v.Err(); err != nil {
		return nil, err
	}
	if v.t.Device() == nil {
		return v.Tensor()
	}
	return v.t.To(nil)
}

// Err returns the error that failed this value, or nil; for a value whose
// tape was released since, the error says so.
func (v *Value) Err() error {
	switch {
	case v == nil:
		return errNilValue
	case v.err != nil:
		return v.err
	case v.t == nil:
		return errZeroValue
	case v.released():
		return errReleased
	}
	return nil
}

// Tape returns the tape the value was computed on (nil for a nil value).
func (v *Value) Tape() *Tape {
	if v == nil {
		return nil
	}
	return v.tape
}

// Shape returns the value's shape, or nil for a failed value.
func (v *Value) Shape() tensor.Shape {
	if v.Err() != nil {
		return nil
	}
	return v.t.Shape()
}

// Device returns the device the value was computed on: nil for host
// memory or a failed value. A layer that makes its own index tensor
// (layers.Memory.Select) moves it there with Tape.Move.
func (v *Value) Device() tensor.Device {
	if v.Err() != nil {
		return nil
	}
	return v.t.Device()
}

// DType returns the value's dtype, or 0 for a failed value.
func (v *Value) DType() tensor.DType {
	if v.Err() != nil {
		return 0
	}
	return v.t.DType()
}

// Item returns the single element of a size-1 value, copied to the host
// when the value is on a device (the loss a training loop reports).
func (v *Value) Item() (float64, error) {
	if err := v.Err(); err != nil {
		return 0, err
	}
	if v.t.Device() != nil && v.t.Size() == 1 {
		return scalar(v.t)
	}
	return v.t.Item()
}

// Grad returns the gradient Backward computed for this value, or nil. It is
// dense; for a parameter's leaf it holds only the dense part of the
// gradient, so read a parameter's gradient from its Param (Grad, or
// SparseGrad after sparse-only use such as embedding lookups). Backward
// keeps the gradients of leaves (Var, Param) only, unless the tape retains
// its graph (Tape.SetRetainGraph): an op's output has none afterwards. It
// is nil after the tape's Release; a gradient returned before stays valid.
func (v *Value) Grad() *tensor.Tensor {
	if v == nil || v.released() {
		return nil
	}
	if v.grad != nil {
		v.kept = true
	}
	return v.grad
}

// RequiresGrad reports whether Backward computes a gradient for this value.
func (v *Value) RequiresGrad() bool { return v != nil && v.requiresGrad }

// Detach returns the same tensor as a constant: gradients stop here. The
// tensor is then the caller's: Tape.Release does not reuse it.
func (v *Value) Detach() *Value {
	if err := v.Err(); err != nil {
		return failed(v, err)
	}
	v.kept = true
	return v.tape.newValue(v.t)
}
