package graph

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Reshape returns x with a new shape, one dim of which may be -1
// (tf.reshape). See ops.ReshapeOp.
func Reshape(x *Value, shape ...int) *Value { return apply(ops.ReshapeOp(shape...), x) }

// Flatten reshapes x [N, d1, d2, ...] to [N, d1*d2*...], keeping the batch
// axis (Keras' Flatten); a rank-1 [N] becomes [N, 1].
func Flatten(x *Value) *Value {
	if x == nil {
		return failed(x, errors.New("flatten: input 0 is a nil value"))
	}
	if err := x.Err(); err != nil {
		return failed(x, err)
	}
	s := x.t.Shape()
	if len(s) == 0 {
		return failed(x, ops.Errorf("flatten", []*tensor.Tensor{x.t}, "want rank >= 1 with a batch axis"))
	}
	return Reshape(x, s[0], s[1:].Size())
}

// Transpose permutes x's axes, output axis i being input axis perm[i]; no
// perm reverses them (tf.transpose). See ops.TransposeOp.
func Transpose(x *Value, perm ...int) *Value { return apply(ops.TransposeOp(perm...), x) }

// Concat joins xs end to end along axis (tf.concat). See ops.ConcatOp.
func Concat(axis int, xs ...*Value) *Value {
	if len(xs) == 0 {
		return failed(nil, errors.New("concat: no values"))
	}
	return apply(ops.ConcatOp(axis), xs...)
}

// Slice keeps [from, to) of x along axis. See ops.SliceOp.
func Slice(x *Value, axis, from, to int) *Value { return apply(ops.SliceOp(axis, from, to), x) }

// Stack joins values of one shape along a new axis (tf.stack), as a Concat
// of each value reshaped to have size 1 there, so it needs no op of its own.
func Stack(axis int, xs ...*Value) *Value {
	if len(xs) == 0 {
		return failed(nil, errors.New("stack: no values"))
	}
	parts := make([]*Value, len(xs))
	for i, x := range xs {
		if x == nil {
			return failed(x, fmt.Errorf("stack: input %d is a nil value", i))
		}
		if err := x.Err(); err != nil {
			return failed(x, err)
		}
		if !x.t.Shape().Equal(xs[0].t.Shape()) {
			return failed(x, ops.Errorf("stack", []*tensor.Tensor{xs[0].t, x.t}, "want values of one shape"))
		}
		ax, err := tensor.Axis(axis, x.t.Rank()+1)
		if err != nil {
			return failed(x, ops.Errorf("stack", []*tensor.Tensor{x.t}, "%v", err))
		}
		s := x.t.Shape()
		parts[i] = Reshape(x, append(append(s[:ax].Clone(), 1), s[ax:]...)...)
	}
	return Concat(axis, parts...)
}
