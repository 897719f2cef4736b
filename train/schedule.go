package train

import "math"

import "github.com/plumbml/plumb/optim"

// LR is a learning-rate schedule that the trainer steps, per batch or per
// epoch. It is an optim.Schedule: give it to the optimizer
// (optim.LRSchedule) and to Config.LR, so that the optimizer follows it
// and the trainer can report the rate it used.
//
//	lr := train.PerEpoch(steps) // steps: an optim.Schedule over epochs 0, 1, ...
//	opt, err := optim.NewAdam(net.Params(), optim.LRSchedule(lr))
type LR struct {
	s        optim.Schedule
	perEpoch bool
	epoch    int64 // epochs completed before the current one
}

// PerBatch follows s at the optimizer's step count, as Keras'
// LearningRateSchedule does: s.LR(0) for the first batch of the run.
func PerBatch(s optim.Schedule) *LR { return &LR{s: s} }

// PerEpoch follows s at the number of completed epochs, as Keras'
// LearningRateScheduler callback and PyTorch's epoch-stepped schedulers
// do: s.LR(0) throughout the first epoch, s.LR(1) throughout the second.
func PerEpoch(s optim.Schedule) *LR { return &LR{s: s, perEpoch: true} }

// LR returns the learning rate of the optimizer's step number step.
func (l *LR) LR(step int64) float64 {
	if l == nil || l.s == nil {
		return math.NaN() // no schedule: an optimizer's Step refuses NaN with an error
	}
	if l.perEpoch {
		return l.s.LR(l.epoch)
	}
	return l.s.LR(step)
}

// startEpoch tells l that epoch (1-based) begins.
func (l *LR) startEpoch(epoch int) {
	if l != nil {
		l.epoch = int64(epoch - 1)
	}
}
