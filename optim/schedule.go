package optim

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate for a step: LR(n) is used by the step
// that follows n completed steps (n = 0 for the first), as Keras'
// LearningRateSchedule is called with optimizer.iterations.
type Schedule interface {
	LR(step int64) float64
}

// ScheduleFunc adapts a function to Schedule. Step rejects a value that is
// negative, infinite or NaN.
type ScheduleFunc func(step int64) float64

// LR returns f(step), or NaN for a nil f (which Step rejects).
func (f ScheduleFunc) LR(step int64) float64 {
	if f == nil {
		return math.NaN()
	}
	return f(step)
}

type constant float64

func (c constant) LR(int64) float64 { return float64(c) }

// Constant returns lr at every step; lr must be finite and >= 0.
func Constant(lr float64) (Schedule, error) {
	if err := nonNegative("Constant", lr); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	return constant(lr), nil
}

type piecewise struct {
	boundaries []int64
	values     []float64
}

func (p piecewise) LR(step int64) float64 {
	for i, b := range p.boundaries {
		if step <= b {
			return p.values[i]
		}
	}
	return p.values[len(p.values)-1]
}

// PiecewiseConstant returns values[0] while step <= boundaries[0],
// values[i] while boundaries[i-1] < step <= boundaries[i], and the last
// value after the last boundary, as tf.keras PiecewiseConstantDecay. There
// must be one more value than boundaries, the boundaries must increase
// strictly and the values be finite and >= 0.
func PiecewiseConstant(boundaries []int64, values []float64) (Schedule, error) {
	if len(values) != len(boundaries)+1 {
		return nil, fmt.Errorf("optim: PiecewiseConstant: %d boundaries need %d values, got %d", len(boundaries), len(boundaries)+1, len(values))
	}
	for i := 1; i < len(boundaries); i++ {
		if boundaries[i] <= boundaries[i-1] {
			return nil, fmt.Errorf("optim: PiecewiseConstant: boundaries %v do not increase strictly", boundaries)
		}
	}
	for _, v := range values {
		if err := nonNegative("PiecewiseConstant", v); err != nil {
			return nil, fmt.Errorf("optim: %w", err)
		}
	}
	return piecewise{append([]int64(nil), boundaries...), append([]float64(nil), values...)}, nil
}

type exponential struct {
	initial, rate float64
	steps         int64
	staircase     bool
}

func (e exponential) LR(step int64) float64 {
	p := float64(step) / float64(e.steps)
	if e.staircase {
		p = math.Floor(p)
	}
	return e.initial * math.Pow(e.rate, p)
}

// ExponentialDecay returns initial * rate^(step/decaySteps), with the
// exponent floored when staircase is set, as tf.keras ExponentialDecay.
// Step decay, the learning rate multiplied by a factor every N steps, is
// ExponentialDecay(lr, N, factor, true). initial and rate must be finite and
// >= 0, decaySteps > 0.
func ExponentialDecay(initial float64, decaySteps int64, rate float64, staircase bool) (Schedule, error) {
	if err := nonNegative("ExponentialDecay: initial", initial); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	if err := nonNegative("ExponentialDecay: rate", rate); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	if decaySteps <= 0 {
		return nil, fmt.Errorf("optim: ExponentialDecay: decaySteps %d, want > 0", decaySteps)
	}
	return exponential{initial, rate, decaySteps, staircase}, nil
}

type cosine struct {
	initial, alpha float64
	steps          int64
}

func (c cosine) LR(step int64) float64 {
	s := min(max(step, 0), c.steps)
	decay := 0.5 * (1 + math.Cos(math.Pi*float64(s)/float64(c.steps)))
	return c.initial * ((1-c.alpha)*decay + c.alpha)
}

// CosineDecay returns initial * ((1-alpha)*0.5*(1+cos(pi*s/decaySteps)) +
// alpha) with s = min(step, decaySteps), as tf.keras CosineDecay without
// warmup (wrap it in Warmup for that): it falls from initial to
// alpha*initial over decaySteps and stays there. initial must be finite and
// >= 0, decaySteps > 0, alpha in [0, 1].
func CosineDecay(initial float64, decaySteps int64, alpha float64) (Schedule, error) {
	if err := nonNegative("CosineDecay: initial", initial); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	if decaySteps <= 0 {
		return nil, fmt.Errorf("optim: CosineDecay: decaySteps %d, want > 0", decaySteps)
	}
	if !(alpha >= 0 && alpha <= 1) {
		return nil, fmt.Errorf("optim: CosineDecay: alpha %v, want a value in [0, 1]", alpha)
	}
	return cosine{initial, alpha, decaySteps}, nil
}

type warmup struct {
	then    Schedule
	steps   int64
	initial float64
}

func (w warmup) LR(step int64) float64 {
	if step >= w.steps {
		return w.then.LR(step - w.steps)
	}
	target := w.then.LR(0)
	return w.initial + (target-w.initial)*float64(step)/float64(w.steps)
}

// Warmup rises linearly from initial at step 0 towards then.LR(0) over
// warmupSteps steps, then follows then, which starts counting its steps
// when the warmup ends (as tf.keras CosineDecay's warmup_steps and
// warmup_target: the decay begins after the warmup). initial must be finite
// and >= 0 and warmupSteps > 0.
func Warmup(then Schedule, warmupSteps int64, initial float64) (Schedule, error) {
	if then == nil {
		return nil, fmt.Errorf("optim: Warmup: nil schedule")
	}
	if warmupSteps <= 0 {
		return nil, fmt.Errorf("optim: Warmup: warmupSteps %d, want > 0", warmupSteps)
	}
	if err := nonNegative("Warmup: initial", initial); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	return warmup{then, warmupSteps, initial}, nil
}
