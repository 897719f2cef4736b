package graph

import (
	"github.com/plumbml/plumb/ops"
)

// The graph forms of ops' reductions (TF's reduce_sum, reduce_mean,
// reduce_max, reduce_min, reduce_variance and reduce_logsumexp). Each
// reduces x over the given axes, negative counting from the end and none
// meaning every axis. The plain form drops the reduced axes
// (keepdims=False); the Keep form keeps each with size 1, so the result
// broadcasts back against x, as in Sub(x, MaxKeep(x, -1)). See ops.ReduceOp
// for the gradients.

func reduce(name string, x *Value, keepDims bool, axes []int) *Value {
	return apply(ops.ReduceOp(name, axes, keepDims), x)
}

// Sum returns the sum over axes, dropping them.
func Sum(x *Value, axes ...int) *Value { return reduce("sum", x, false, axes) }

// SumKeep returns the sum over axes, keeping them with size 1.
func SumKeep(x *Value, axes ...int) *Value { return reduce("sum", x, true, axes) }

// Mean returns the mean over axes, dropping them.
func Mean(x *Value, axes ...int) *Value { return reduce("mean", x, false, axes) }

// MeanKeep returns the mean over axes, keeping them with size 1.
func MeanKeep(x *Value, axes ...int) *Value { return reduce("mean", x, true, axes) }

// Max returns the largest element over axes, dropping them.
func Max(x *Value, axes ...int) *Value { return reduce("max", x, false, axes) }

// MaxKeep returns the largest element over axes, keeping them with size 1.
func MaxKeep(x *Value, axes ...int) *Value { return reduce("max", x, true, axes) }

// Min returns the smallest element over axes, dropping them.
func Min(x *Value, axes ...int) *Value { return reduce("min", x, false, axes) }

// MinKeep returns the smallest element over axes, keeping them with size 1.
func MinKeep(x *Value, axes ...int) *Value { return reduce("min", x, true, axes) }

// Variance returns the population variance (ddof 0) over axes, dropping them.
func Variance(x *Value, axes ...int) *Value { return reduce("variance", x, false, axes) }

// VarianceKeep returns the population variance over axes, keeping them with size 1.
func VarianceKeep(x *Value, axes ...int) *Value { return reduce("variance", x, true, axes) }

// LogSumExp returns the stable log(Σ exp(x)) over axes, dropping them.
func LogSumExp(x *Value, axes ...int) *Value { return reduce("logsumexp", x, false, axes) }

// LogSumExpKeep returns the stable log(Σ exp(x)) over axes, keeping them with size 1.
func LogSumExpKeep(x *Value, axes ...int) *Value { return reduce("logsumexp", x, true, axes) }
