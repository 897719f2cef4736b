package optim

import (
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// NewRMSProp returns RMSProp (Hinton's lecture 6e) with epsilon inside the
// square root, as TF's ApplyRMSProp and ApplyCenteredRMSProp and Keras'
// RMSprop. Slots: "ms" (mean square), plus "mom" with Momentum > 0 and "mg"
// (mean gradient) when Centered, all starting at zero as Keras (TF1's
// RMSPropOptimizer started ms at one):
//
//	ms = rho*ms + (1-rho)*g²
//	mg = rho*mg + (1-rho)*g              (Centered)
//	d  = ms + eps, or ms - mg² + eps     (Centered)
//	mom = momentum*mom + lr*g/sqrt(d)
//	var -= mom
//
// With momentum 0, var -= lr*g/sqrt(d). Options: Rho (default 0.9),
// Momentum (0), Epsilon (1e-7), Centered. Default LR 0.001. All as Keras.
// PyTorch's RMSprop adds eps outside the root (g/(sqrt(d)+eps)). The
// mean square decays on every row, so a sparse gradient is made dense.
func NewRMSProp(params []*graph.Param, opts ...Option) (Optimizer, error) {
	c, err := configure("RMSProp", config{lr: constant(0.001), rho: 0.9, epsilon: 1e-7},
		[]string{"Rho", "Momentum", "Epsilon", "Centered"}, opts)
	if err != nil {
		return nil, err
	}
	slots := []slot{{"ms", 0}}
	k := rmspropCoef{rho: c.rho, momentum: c.momentum, eps: c.epsilon, mom: -1, mg: -1}
	if c.momentum > 0 {
		k.mom = len(slots)
		slots = append(slots, slot{"mom", 0})
	}
	if c.centered {
		k.mg = len(slots)
		slots = append(slots, slot{"mg", 0})
	}
	r := rule{name: "RMSProp", slots: slots, prepare: func(lr float64, _ int64) update {
		k := k
		k.lr = lr
		return func(v, g *tensor.Tensor, rows []int, s *slotSet) {
			run(k, v, g, rows, s, rmspropKernel[float32], rmspropKernel[float64])
		}
	}}
	return newOptimizer(params, c, r)
}

// rmspropCoef holds one step's scalars; mom and mg are the indices of those
// slots, or -1 when the rule has none.
type rmspropCoef struct {
	lr, rho, momentum, eps float64
	mom, mg                int
}

func rmspropKernel[T tensor.Float](c rmspropCoef, v, g []T, s [][]T) {
	lr, rho, momentum, eps := T(c.lr), T(c.rho), T(c.momentum), T(c.eps)
	ms := s[0]
	for i, gi := range g {
		ms[i] = rho*ms[i] + (1-rho)*gi*gi
		d := ms[i] + eps
		if c.mg >= 0 {
			mg := s[c.mg]
			mg[i] = rho*mg[i] + (1-rho)*gi
			d = ms[i] - mg[i]*mg[i] + eps
		}
		inc := lr * gi / sqrt(d)
		if c.mom >= 0 {
			mom := s[c.mom]
			mom[i] = momentum*mom[i] + inc
			inc = mom[i]
		}
		v[i] -= inc
	}
}
