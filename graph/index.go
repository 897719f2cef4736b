package graph

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Gather returns params' slices at indices along axis (tf.gather): indices
// is an int32 or int64 tensor of any shape (ids take no gradient, so they
// are tensors, as every label and id); the gradient scatter-adds into
// params. See ops.GatherOp.
func Gather(params *Value, indices *tensor.Tensor, axis int) *Value {
	return apply(ops.GatherOp(axis), params, constIn("gather", params, indices))
}

// Where returns a where cond is nonzero and b elsewhere, broadcasting all
// three (tf.where); cond gets no gradient. See ops.WhereOp.
func Where(cond, a, b *Value) *Value { return apply(ops.WhereOp(), cond, a, b) }
