package optim

import (
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
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
	return newOptimizer(params, c, rule{name: "RMSProp", slots: rmspropSlots(c.momentum > 0, c.centered),
		coef: func(lr float64, _ int64) ops.Update {
			return ops.Update{Rule: "rmsprop", LR: lr, Rho: c.rho, Momentum: c.momentum, Epsilon: c.epsilon, Centered: c.centered}
		},
		host: hostKernel{rmspropKernel[float32], rmspropKernel[float64]},
	})
}

// rmspropSlots returns RMSProp's slots in their order, which the kernels
// of every device follow (ops.UpdateKernel): ms, then mom with momentum,
// then mg when centered.
func rmspropSlots(momentum, centered bool) []slot {
	slots := []slot{{"ms", 0}}
	if momentum {
		slots = append(slots, slot{"mom", 0})
	}
	if centered {
		slots = append(slots, slot{"mg", 0})
	}
	return slots
}

func rmspropKernel[T tensor.Float](u *ops.Update, v, g []T, s [][]T) {
	lr, rho, momentum, eps := T(u.LR), T(u.Rho), T(u.Momentum), T(u.Epsilon)
	hasMom, centered := u.Momentum > 0, u.Centered
	ms, mom, mg := s[0], []T(nil), []T(nil)
	if hasMom {
		mom = s[1]
	}
	if centered {
		mg = s[len(s)-1]
	}
	for i, gi := range g {
		ms[i] = rho*ms[i] + (1-rho)*gi*gi
		d := ms[i] + eps
		if centered {
			mg[i] = rho*mg[i] + (1-rho)*gi
			d = ms[i] - mg[i]*mg[i] + eps
		}
		inc := lr * gi / sqrt(d)
		if hasMom {
			mom[i] = momentum*mom[i] + inc
			inc = mom[i]
		}
		v[i] -= inc
	}
}
