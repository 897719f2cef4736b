package optim

import (
	"github.com/plumbml/plumb/graph"
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
	return newOptimizer(params, c, rule{name: "SGD", sparse: true, prepare: func(lr float64, _ int64) update {
		return func(v, g *tensor.Tensor, rows []int, s *slotSet) {
			run(lr, v, g, rows, s, sgdKernel[float32], sgdKernel[float64])
		}
	}})
}

// sgdKernel is var -= lr*g, as axpy computes it (var += (-lr)*g).
func sgdKernel[T tensor.Float](lr float64, v, g []T, _ [][]T) { axpyT(T(-lr), g, v) }

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
	r := rule{name: "Momentum", slots: []slot{{"momentum", 0}}, prepare: func(lr float64, _ int64) update {
		k := momentumCoef{lr: lr, m: c.momentum, nesterov: c.nesterov}
		return func(v, g *tensor.Tensor, rows []int, s *slotSet) {
			run(k, v, g, rows, s, momentumKernel[float32], momentumKernel[float64])
		}
	}}
	return newOptimizer(params, c, r)
}

type momentumCoef struct {
	lr, m    float64
	nesterov bool
}

func momentumKernel[T tensor.Float](c momentumCoef, v, g []T, s [][]T) {
	lr, m, acc := T(c.lr), T(c.m), s[0]
	for i, gi := range g {
		acc[i] = m*acc[i] + gi
		if c.nesterov {
			v[i] -= gi*lr + acc[i]*m*lr
		} else {
			v[i] -= lr * acc[i]
		}
	}
}
