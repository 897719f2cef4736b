package graph

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Gather returns params' slices at indices along axis (tf.gather, ONNX
// Gather; a negative index counts from the end): indices is an int32 or
// int64 tensor of any shape (ids take no gradient, so they
// are tensors, as every label and id); the gradient scatter-adds into
// params. See ops.GatherOp.
func Gather(params *Value, indices *tensor.Tensor, axis int) *Value {
	return apply(ops.GatherOp(axis), params, constIn("gather", params, indices))
}

// Where returns a where cond is nonzero and b elsewhere, broadcasting all
// three (tf.where); cond gets no gradient. See ops.WhereOp.
func Where(cond, a, b *Value) *Value { return apply(ops.WhereOp(), cond, a, b) }

// GatherElements returns data's elements at indices along axis (ONNX
// GatherElements, torch.gather): indices has data's rank and gives the
// output its shape; the gradient scatter-adds into data. See
// ops.GatherElementsOp.
func GatherElements(data *Value, indices *tensor.Tensor, axis int) *Value {
	return apply(ops.GatherElementsOp(ops.GatherElementsAttrs{Axis: axis}), data, constIn("gather_elements", data, indices))
}

// ScatterND returns data with the slices at indices' coordinate rows
// replaced by (ops.ScatterNone) or added to (ops.ScatterAdd) the rows of
// updates (ONNX ScatterND); data and updates get gradients. See
// ops.ScatterNDOp.
func ScatterND(data *Value, indices *tensor.Tensor, updates *Value, reduction ops.ScatterReduction) *Value {
	op := ops.ScatterNDOp(ops.ScatterNDAttrs{Reduction: reduction})
	return apply(op, data, constIn("scatter_nd", data, indices), updates)
}
