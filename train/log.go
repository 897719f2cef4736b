package train

import "github.com/plumbml/plumb/runlog"

// LogTo returns hooks that write the run to w: a step record every
// `every` steps (every > 0) and at the end of each epoch, and an epoch
// record, with the evaluator's metrics, after each epoch.
func LogTo(w *runlog.Writer, every int) Hooks {
	var examples int64
	var last Step
	step := func(s Step) runlog.Record {
		return runlog.Record{Kind: runlog.KindStep, Epoch: s.Epoch, Step: s.GlobalStep, Examples: examples,
			Loss: s.MeanLoss, SamplesPerSec: s.SamplesPerSec, LR: s.LR, Wall: s.Elapsed.Seconds()}
	}
	return Hooks{
		Step: func(s Step) error {
			examples += int64(s.Examples)
			last = s
			if every > 0 && s.GlobalStep%int64(every) == 0 {
				return w.Write(step(s))
			}
			return nil
		},
		Epoch: func(e Epoch) error {
			if every <= 0 || last.GlobalStep%int64(every) != 0 {
				if err := w.Write(step(last)); err != nil {
					return err
				}
			}
			return w.Write(runlog.Record{Kind: runlog.KindEpoch, Epoch: e.Epoch, Step: last.GlobalStep, Examples: examples,
				Loss: e.TrainLoss, Metrics: e.Metrics, SamplesPerSec: e.SamplesPerSec, LR: e.LR, Wall: e.Elapsed.Seconds()})
		},
	}
}
