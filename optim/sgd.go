package optim

import (
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// NewSGD returns plain gradient descent, TF's ApplyGradientDescent:
//
//	var -= lr * g
//
// Defaults: LR 0.01 (Keras' SGD). It has no state besides "iterations".
// A sparse gradient updates only its rows (a zero gradient changes
// nothing), unless L2 is set.
func NewSGD(params []*graph.Param, opts ...Option) (Optimizer, error) {
	c, err := configure("SGD", config{lr: constant(0.01)}, nil, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer(params, c, rule{name: "SGD", sparse: true,
		coef: func(lr float64, _ int64) ops.Update { return ops.Update{Rule: "sgd", LR: lr} },
		host: hostKernel{sgdKernel[float32], sgdKernel[float64]},
	})
}

// sgdKernel is var -= lr*g, as axpy computes it (var += (-lr)*g).
func sgdKernel[T tensor.Float](u *ops.Update, v, g []T, _ [][]T) { axpyT(T(-u.LR), g, v) }

// NewMomentum returns gradient descent with momentum, TF's ApplyMomentum,
// with one slot "momentum" (the accumulator, starting at zero):
//
//	accum = m*accum + g
//	var -= lr*accum                  (default)
//	var -= lr*(g + m*accum)          (Nesterov, TF's use_nesterov)
//
// Options: Momentum (default 0.9), Nesterov. Default LR 0.01. With a
// constant learning rate this is the same trajectory as Keras' SGD with
// momentum (which keeps velocity = -lr*accum); with a changing rate the two
// differ, and this is TF's raw op. PyTorch's SGD momentum is this form too
// (with dampening 0). The accumulator decays on every row, so a sparse
// gradient is made dense.
func NewMomentum(params []*graph.Param, opts ...Option) (Optimizer, error) {
	c, err := configure("Momentum", config{lr: constant(0.01), momentum: 0.9},
		[]string{"Momentum", "Nesterov"}, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer(params, c, rule{name: "Momentum", slots: []slot{{"momentum", 0}},
		coef: func(lr float64, _ int64) ops.Update {
			return ops.Update{Rule: "momentum", LR: lr, Momentum: c.momentum, Nesterov: c.nesterov}
		},
		host: hostKernel{momentumKernel[float32], momentumKernel[float64]},
	})
}

func momentumKernel[T tensor.Float](u *ops.Update, v, g []T, s [][]T) {
	lr, m, acc := T(u.LR), T(u.Momentum), s[0]
	for i, gi := range g {
		acc[i] = m*acc[i] + gi
		if u.Nesterov {
			v[i] -= gi*lr + acc[i]*m*lr
		} else {
			v[i] -= lr * acc[i]
		}
	}
}
