package graph

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// CumSum returns the cumulative sum of x along an axis (tf.math.cumsum,
// ONNX CumSum) with the exclusive and reverse forms in a; the gradient is
// the cumulative sum of the upstream gradient the other way. See
// ops.CumSumOp.
func CumSum(x *Value, a ops.CumSumAttrs) *Value { return apply(ops.CumSumOp(a), x) }

// GatherND returns the slices of data at the coordinate rows of indices'
// last axis, after batchDims leading dims both share (tf.gather_nd, ONNX
// GatherND); the gradient scatter-adds into data. See ops.GatherNDOp.
func GatherND(data *Value, indices *tensor.Tensor, batchDims int) *Value {
	return apply(ops.GatherNDOp(ops.GatherNDAttrs{BatchDims: batchDims}), data, constIn("gather_nd", data, indices))
}
