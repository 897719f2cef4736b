package optim

import (
	"math"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/vec"
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
	r := rule{name: name, slots: []slot{{"m", 0}, {"v", 0}}, prepare: func(lr float64, t int64) update {
		k := adamCoef{
			lrT:   lr * math.Sqrt(1-math.Pow(c.beta2, float64(t))) / (1 - math.Pow(c.beta1, float64(t))),
			beta1: c.beta1, beta2: c.beta2, eps: c.epsilon,
		}
		return func(v, g *tensor.Tensor, rows []int, s *slotSet) {
			run(k, v, g, rows, s, adamKernel[float32], adamKernel[float64])
		}
	}}
	return newOptimizer(params, c, r)
}

type adamCoef struct{ lrT, beta1, beta2, eps float64 }

// adamKernel applies the update to v with slots m and v (s), in vec.Adam:
// AVX on amd64 for float32, each product and sum rounded as written.
func adamKernel[T tensor.Float](c adamCoef, v, g []T, s [][]T) {
	vec.Adam(v, g, s[0], s[1], T(c.lrT), T(c.beta1), T(c.beta2), T(c.eps))
}
