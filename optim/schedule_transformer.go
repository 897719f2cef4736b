package optim

import (
	"fmt"
	"math"
)

// The Transformer's schedules: a warmup followed by an inverse-square-root
// or a linear decay. Compose them with Warmup, which starts the decay's
// step count when the warmup ends:
//
//	Warmup(LinearDecay(peak, total-w, 0), w, 0)   transformers' get_linear_schedule_with_warmup
//	Warmup(InverseSqrtDecay(peak, w), w, 0)        fairseq's inverse_sqrt (warmup_init_lr 0)
//	Noam(dModel, w, factor)                        Vaswani et al. 2017, eq. 3

type linearDecay struct {
	initial, end float64
	steps        int64
}

func (l linearDecay) LR(step int64) float64 {
	if step >= l.steps {
		return l.end
	}
	return l.initial + (l.end-l.initial)*float64(step)/float64(l.steps)
}

// LinearDecay falls linearly from initial at step 0 to end at decaySteps
// and stays there (tf.keras.optimizers.schedules.PolynomialDecay with
// power 1; after a Warmup of w steps with decaySteps = total - w and end 0
// it is transformers' get_linear_schedule_with_warmup). initial and end
// must be finite and >= 0, decaySteps > 0.
func LinearDecay(initial float64, decaySteps int64, end float64) (Schedule, error) {
	if err := nonNegative("LinearDecay: initial", initial); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	if err := nonNegative("LinearDecay: end", end); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	if decaySteps <= 0 {
		return nil, fmt.Errorf("optim: LinearDecay: decaySteps %d, want > 0", decaySteps)
	}
	return linearDecay{initial, end, decaySteps}, nil
}

type inverseSqrt struct {
	initial   float64
	timescale int64
}

func (s inverseSqrt) LR(step int64) float64 {
	return s.initial * math.Sqrt(float64(s.timescale)/float64(s.timescale+max(step, 0)))
}

// InverseSqrtDecay returns initial·sqrt(timescale/(timescale + step)):
// initial at step 0, falling as one over the square root of the steps.
// After a Warmup of w steps with timescale w it is fairseq's inverse_sqrt
// schedule, peak·sqrt(w/n) once n >= w steps are done. initial must be
// finite and >= 0, timescale > 0.
func InverseSqrtDecay(initial float64, timescale int64) (Schedule, error) {
	if err := nonNegative("InverseSqrtDecay: initial", initial); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	if timescale <= 0 {
		return nil, fmt.Errorf("optim: InverseSqrtDecay: timescale %d, want > 0", timescale)
	}
	return inverseSqrt{initial, timescale}, nil
}

type noam struct {
	scale  float64
	warmup float64
}

func (n noam) LR(step int64) float64 {
	s := float64(max(step, 0) + 1)
	return n.scale * min(1/math.Sqrt(s), s*math.Pow(n.warmup, -1.5))
}

// Noam returns the original Transformer's rate (Vaswani et al. 2017,
// eq. 3, with the factor of the Annotated Transformer):
//
//	lr = factor · d_model^-0.5 · min(s^-0.5, s · warmup^-1.5)
//
// for the s-th step (s = step + 1): linear for warmup steps, then one
// over the square root of s. dModel and warmupSteps must be > 0, factor
// finite and > 0.
func Noam(dModel int, warmupSteps int64, factor float64) (Schedule, error) {
	if dModel <= 0 || warmupSteps <= 0 {
		return nil, fmt.Errorf("optim: Noam: dModel %d and warmupSteps %d, want both > 0", dModel, warmupSteps)
	}
	if err := positive("Noam: factor", factor); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	return noam{factor / math.Sqrt(float64(dModel)), float64(warmupSteps)}, nil
}
