package optim

import (
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// NewAdagrad returns Adagrad (Duchi et al. 2011) as tf.keras 3's Adagrad,
// with one slot "accumulator" starting at the initial accumulator value:
//
//	accum += g²
//	var -= lr * g / sqrt(accum + eps)
//
// Keras 3 adds eps inside the root; TF's raw ApplyAdagradV2 (and Keras 2)
// used g/(sqrt(accum) + eps), which differs only while accum is tiny.
// Options: InitialAccumulator (default 0.1), Epsilon (1e-7). Default LR
// 0.001. All as Keras.
//
// A zero gradient leaves an element as it is (accum += 0, var -= 0) while
// sqrt(accum + eps) > 0, so with Epsilon > 0 a sparse gradient updates
// only its rows (unless L2 is set); with Epsilon 0 an untouched row whose
// accumulator is 0 would take 0/0 in the dense update, so the gradient is
// made dense to give that same result.
func NewAdagrad(params []*graph.Param, opts ...Option) (Optimizer, error) {
	c, err := configure("Adagrad", config{lr: constant(0.001), initAccum: 0.1, epsilon: 1e-7},
		[]string{"InitialAccumulator", "Epsilon"}, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer(params, c, rule{name: "Adagrad", slots: []slot{{"accumulator", c.initAccum}}, sparse: c.epsilon > 0,
		coef: func(lr float64, _ int64) ops.Update { return ops.Update{Rule: "adagrad", LR: lr, Epsilon: c.epsilon} },
		host: hostKernel{adagradKernel[float32], adagradKernel[float64]},
	})
}

// adagradKernel applies the update to v with the accumulator slot, in
// vec.Adagrad (an AVX loop for float32).
func adagradKernel[T tensor.Float](u *ops.Update, v, g []T, s [][]T) {
	vec.Adagrad(v, g, s[0], T(u.LR), T(u.Epsilon))
}
