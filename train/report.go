package train

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/plumbml/plumb/runlog"
)

// unitOr returns unit, or runlog.DefaultUnit when it is empty.
func unitOr(unit string) string {
	if unit == "" {
		return runlog.DefaultUnit
	}
	return unit
}

// EpochLine is the line Config.Report prints after an epoch, as Keras's
// fit prints one per epoch: the training loss, every metric of the
// evaluator by name (sorted), the training rate in unit per second and the
// epoch's time, e.g.
//
//	epoch 2/5: train loss 0.0412, accuracy 0.9871, loss 0.04013 (5120 images/s, 12s + eval 2s)
func EpochLine(e Epoch, epochs int, unit string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "epoch %d/%d: train loss %.4f", e.Epoch, epochs, e.TrainLoss)
	for _, k := range slices.Sorted(maps.Keys(e.Metrics)) {
		fmt.Fprintf(&b, ", %s %.4g", k, e.Metrics[k])
	}
	fmt.Fprintf(&b, " (%.0f %s/s, %s", e.SamplesPerSec, unitOr(unit), e.Duration.Round(time.Second))
	if e.EvalDuration > 0 {
		fmt.Fprintf(&b, " + eval %s", e.EvalDuration.Round(time.Second))
	}
	b.WriteString(")")
	if e.Best && len(e.Metrics) > 0 {
		b.WriteString(" best")
	}
	return b.String()
}

// report sets up Config.Report: a Bar for the progress (unless the caller
// set Progress) and a hook that prints EpochLine after each epoch and why
// the run stopped early.
func (r *run[B]) report() {
	w := r.cfg.Report
	if w == nil || !r.leader {
		return
	}
	bar := NewBar(w)
	bar.Unit = r.cfg.Unit
	if r.cfg.Progress == nil {
		r.cfg.Progress = bar.Update
	}
	n := len(r.cfg.Hooks)
	r.cfg.Hooks = append(r.cfg.Hooks[:n:n], Hooks{
		Epoch: func(e Epoch) error {
			bar.Clear()
			fmt.Fprintln(w, EpochLine(e, r.cfg.Epochs, r.cfg.Unit))
			return nil
		},
		End: func(e End) {
			bar.Clear()
			if e.Reason != runlog.ReasonFinished && e.Err == nil {
				fmt.Fprintln(w, e.Reason)
			}
		},
	})
}
