package optim

import (
	"math"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// NewAdam returns Adam (Kingma & Ba 2015) in TF's epsilon-hat form
// (ApplyAdam, and Keras' Adam), with slots "m" and "v" starting at zero.
// At step t = 1, 2, ...:
//
//	lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//	m = beta1*m + (1-beta1)*g
//	v = beta2*v + (1-beta2)*g²
//	var -= lr_t * m / (sqrt(v) + eps)
//
// eps is added to the uncorrected sqrt(v), which differs slightly from the
// paper's and PyTorch's m̂/(sqrt(v̂)+eps) while v is small.
//
// Options: Beta1 (default 0.9), Beta2 (0.999), Epsilon (1e-7),
// WeightDecay (0; see NewAdamW). Default LR 0.001. All as Keras. The
// moments decay on every row, so a sparse gradient is made dense (TF's
// non-lazy Adam; LazyAdam's row-only update is a different rule).
func NewAdam(params []*graph.Param, opts ...Option) (Optimizer, error) {
	return newAdam("Adam", 0, params, opts)
}

// NewAdamW returns Adam with decoupled weight decay (Loshchilov & Hutter
// 2019) as tf.keras.optimizers.AdamW: at each step, first
//
//	var -= lr * wd * var
//
// with the step's learning rate, and then the Adam update of NewAdam from
// the gradient, which the decay does not enter. Defaults as NewAdam, with
// WeightDecay 0.004 (Keras' AdamW). PyTorch's AdamW decays in the same
// order, by the same lr*wd.
func NewAdamW(params []*graph.Param, opts ...Option) (Optimizer, error) {
	return newAdam("AdamW", 0.004, params, opts)
}

func newAdam(name string, wd float64, params []*graph.Param, opts []Option) (Optimizer, error) {
	c, err := configure(name, config{lr: constant(0.001), beta1: 0.9, beta2: 0.999, epsilon: 1e-7, weightDecay: wd},
		[]string{"Beta1", "Beta2", "Epsilon", "WeightDecay"}, opts)
	if err != nil {
		return nil, err
	}
	return newOptimizer(params, c, rule{name: name, slots: []slot{{"m", 0}, {"v", 0}},
		// The update's LR is step t's bias-corrected lr_t.
		coef: func(lr float64, t int64) ops.Update {
			lrT := lr * math.Sqrt(1-math.Pow(c.beta2, float64(t))) / (1 - math.Pow(c.beta1, float64(t)))
			return ops.Update{Rule: "adam", LR: lrT, Beta1: c.beta1, Beta2: c.beta2, Epsilon: c.epsilon}
		},
		host: hostKernel{adamKernel[float32], adamKernel[float64]},
	})
}

// adamKernel applies the update to v with slots m and v (s), in vec.Adam:
// AVX on amd64 for float32, each product and sum rounded as written.
func adamKernel[T tensor.Float](u *ops.Update, v, g []T, s [][]T) {
	vec.Adam(v, g, s[0], s[1], T(u.LR), T(u.Beta1), T(u.Beta2), T(u.Epsilon))
}
