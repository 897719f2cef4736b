package graph

import (
	"github.com/plumbml/plumb/ops"
)

// Gather returns params' slices at indices along axis (tf.gather): indices
// is an int32 or int64 value of any shape, usually a Const; the gradient
// scatter-adds into params. See ops.GatherOp.
func Gather(params, indices *Value, axis int) *Value {
	return apply(ops.GatherOp(axis), params, indices)
}

// Where returns a where cond is nonzero and b elsewhere, broadcasting all
// three (tf.where); cond gets no gradient. See ops.WhereOp.
func Where(cond, a, b *Value) *Value { return apply(ops.WhereOp(), cond, a, b) }
