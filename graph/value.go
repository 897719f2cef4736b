package graph

import (
	"github.com/plumbml/plumb/tensor"
)

// Value is a tensor computed on a tape, or the error that stopped it.
type Value struct {
	tape         *Tape
	t            *tensor.Tensor
	err          error
	requiresGrad bool
	grad         *tensor.Tensor
	param        *Param
}

// Tensor returns the computed tensor, or the error that failed this value.
func (v *Value) Tensor() (*tensor.Tensor, error) {
	if v.err != nil {
		return nil, v.err
	}
	return v.t, nil
}

// Err returns the error that failed this value, or nil.
func (v *Value) Err() error { return v.err }

// Tape returns the tape the value was computed on (nil for a nil value).
func (v *Value) Tape() *Tape {
	if v == nil {
		return nil
	}
	return v.tape
}

// Shape returns the value's shape, or nil for a failed value.
func (v *Value) Shape() tensor.Shape {
	if v.err != nil {
		return nil
	}
	return v.t.Shape()
}

// DType returns the value's dtype, or 0 for a failed value.
func (v *Value) DType() tensor.DType {
	if v.err != nil {
		return 0
	}
	return v.t.DType()
}

// Item returns the single element of a size-1 value.
func (v *Value) Item() (float64, error) {
	if v.err != nil {
		return 0, v.err
	}
	return v.t.Item()
}

// Grad returns the gradient Backward computed for this value, or nil. It is
// dense; for a parameter's leaf it holds only the dense part of the
// gradient, so read a parameter's gradient from its Param (Grad, or
// SparseGrad after sparse-only use such as embedding lookups).
func (v *Value) Grad() *tensor.Tensor { return v.grad }

// RequiresGrad reports whether Backward computes a gradient for this value.
func (v *Value) RequiresGrad() bool { return v.requiresGrad }

// Detach returns the same tensor as a constant: gradients stop here.
func (v *Value) Detach() *Value {
	if v.err != nil {
		return v
	}
	return &Value{tape: v.tape, t: v.t}
}
