package optim

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Option configures an optimizer. Each constructor lists the options it
// takes beyond the common ones (LR, LRSchedule, L2, GlobalClipNorm); any
// other option, or an out-of-range value, is an error from the constructor.
type Option struct {
	name  string
	apply func(c *config) error
}

// config holds every hyperparameter; each constructor reads the ones its
// rule uses.
type config struct {
	lr          Schedule
	beta1       float64
	beta2       float64
	epsilon     float64
	momentum    float64
	nesterov    bool
	rho         float64
	centered    bool
	initAccum   float64
	weightDecay float64
	l2          float64
	clipNorm    float64            // 0: no clipping
	lrMult      map[string]float64 // per-parameter learning-rate factors (ParamLR)
}

// common lists the options every optimizer takes.
var common = []string{"LR", "LRSchedule", "L2", "GlobalClipNorm", "ParamLR"}

// configure applies opts over the defaults in c, for the optimizer called
// name, which takes the common options and those in extra.
func configure(name string, c config, extra []string, opts []Option) (config, error) {
	for _, o := range opts {
		if o.apply == nil {
			return c, fmt.Errorf("optim: %s: zero Option", name)
		}
		if !slices.Contains(common, o.name) && !slices.Contains(extra, o.name) {
			return c, fmt.Errorf("optim: %s does not take option %s", name, o.name)
		}
		if err := o.apply(&c); err != nil {
			return c, fmt.Errorf("optim: %s: %w", name, err)
		}
	}
	return c, nil
}

// LR sets a constant learning rate (>= 0).
func LR(lr float64) Option {
	return Option{"LR", func(c *config) error {
		c.lr = constant(lr)
		return nonNegative("LR", lr)
	}}
}

// LRSchedule sets a learning rate that depends on the step: Step uses
// s.LR(n) where n is the number of steps taken before it (0 first), as
// Keras evaluates a LearningRateSchedule at optimizer.iterations.
func LRSchedule(s Schedule) Option {
	return Option{"LRSchedule", func(c *config) error {
		if s == nil {
			return errors.New("LRSchedule: nil schedule")
		}
		c.lr = s
		return nil
	}}
}

// ParamLR scales the learning rate of the named parameters: parameter
// name steps with lr·factor (the schedule's rate times factor, for the
// rule's update and the decoupled weight decay alike), the others with
// lr. It is Paddle's ParamAttr(learning_rate=factor), which the book's SRL
// model gives its CRF transitions (1e-3), and PyTorch's parameter groups
// with their own lr. Every name must be a trainable parameter of the
// optimizer, and every factor >= 0. Several ParamLR options add up their
// names; a name given twice takes the last factor.
func ParamLR(factors map[string]float64) Option {
	return Option{"ParamLR", func(c *config) error {
		if c.lrMult == nil {
			c.lrMult = map[string]float64{}
		}
		for name, f := range factors {
			if err := nonNegative("ParamLR["+name+"]", f); err != nil {
				return err
			}
			c.lrMult[name] = f
		}
		return nil
	}}
}

// Beta1 sets Adam's decay rate for the first moment, in [0, 1).
func Beta1(b float64) Option {
	return Option{"Beta1", func(c *config) error { c.beta1 = b; return unitInterval("Beta1", b) }}
}

// Beta2 sets Adam's decay rate for the second moment, in [0, 1).
func Beta2(b float64) Option {
	return Option{"Beta2", func(c *config) error { c.beta2 = b; return unitInterval("Beta2", b) }}
}

// Epsilon sets the small constant (>= 0) that keeps Adam's, RMSProp's and
// Adagrad's denominators away from zero.
func Epsilon(eps float64) Option {
	return Option{"Epsilon", func(c *config) error { c.epsilon = eps; return nonNegative("Epsilon", eps) }}
}

// Momentum sets the momentum coefficient (>= 0) of Momentum and RMSProp.
func Momentum(m float64) Option {
	return Option{"Momentum", func(c *config) error { c.momentum = m; return nonNegative("Momentum", m) }}
}

// Nesterov switches Momentum to Nesterov's accelerated gradient.
func Nesterov() Option {
	return Option{"Nesterov", func(c *config) error { c.nesterov = true; return nil }}
}

// Rho sets RMSProp's decay rate for the mean square, in [0, 1).
func Rho(r float64) Option {
	return Option{"Rho", func(c *config) error { c.rho = r; return unitInterval("Rho", r) }}
}

// Centered makes RMSProp divide by an estimate of the gradient's variance
// instead of its uncentered second moment.
func Centered() Option {
	return Option{"Centered", func(c *config) error { c.centered = true; return nil }}
}

// InitialAccumulator sets Adagrad's starting accumulator value (>= 0).
func InitialAccumulator(v float64) Option {
	return Option{"InitialAccumulator", func(c *config) error {
		c.initAccum = v
		return nonNegative("InitialAccumulator", v)
	}}
}

// WeightDecay sets Adam's decoupled weight decay (>= 0): before each
// update, var -= lr*wd*var, as Keras' weight_decay (AdamW's default is 0.004).
func WeightDecay(wd float64) Option {
	return Option{"WeightDecay", func(c *config) error {
		c.weightDecay = wd
		return nonNegative("WeightDecay", wd)
	}}
}

// L2 adds l2*var to every gradient before the update (>= 0): the gradient
// of the penalty (l2/2)*sum(var²), or of Keras' L2(l) regulariser with
// l = l2/2. It is added before clipping, as a penalty in the loss would be.
func L2(l2 float64) Option {
	return Option{"L2", func(c *config) error { c.l2 = l2; return nonNegative("L2", l2) }}
}

// GlobalClipNorm clips the gradients of each step to a global norm of at
// most maxNorm (> 0) before the update, as ClipGlobalNorm and Keras'
// global_clipnorm. L2's term is included in the norm.
func GlobalClipNorm(maxNorm float64) Option {
	return Option{"GlobalClipNorm", func(c *config) error {
		c.clipNorm = maxNorm
		return positive("GlobalClipNorm", maxNorm)
	}}
}

func unitInterval(name string, x float64) error {
	if !(x >= 0 && x < 1) {
		return fmt.Errorf("%s %v: want a value in [0, 1)", name, x)
	}
	return nil
}

func nonNegative(name string, x float64) error {
	if !(x >= 0) || math.IsInf(x, 1) {
		return fmt.Errorf("%s %v: want a finite value >= 0", name, x)
	}
	return nil
}

func positive(name string, x float64) error {
	if !(x > 0) || math.IsInf(x, 1) {
		return fmt.Errorf("%s %v: want a finite value > 0", name, x)
	}
	return nil
}
