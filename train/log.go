package train

import (
	"fmt"
	"io"
	"os"

	"github.com/plumbml/plumb/runlog"
)

// LogTo returns hooks that write the run to w: a step record every
// `every` steps (every > 0), at every twentieth of an epoch (PointsPerEpoch,
// so that a short run's curves have points enough to read) and at the end
// of each epoch, and an epoch
// record, with the evaluator's metrics, after each epoch, and when the run
// ends (Hooks.End), its last step if not yet logged and an end record with
// the reason (runlog.KindEnd): finished, interrupted, stopped or the
// error. The caller still closes w. On a log that
// runlog.Append continued, the first step first writes the resume record
// (w.Resume), and the examples counted go on from the log's.
//
// The log never ends the run: when a record cannot be written (a full
// disk), LogTo prints one warning to warn (os.Stderr when nil) and writes
// no more records, and training, its StatePath and BestPath files and
// whatever the caller saves after it go on as without a log. The log
// keeps the records written before the failure (runlog.Writer cuts off a
// partial line).
func LogTo(w *runlog.Writer, every int, warn io.Writer) Hooks {
	if warn == nil {
		warn = os.Stderr
	}
	var examples int64
	var last Step
	var logged int64        // the global step of the last step record written
	part, partEpoch := 0, 0 // the fraction of an epoch (in PointsPerEpoch-ths) the last record reached, and its epoch
	started, failed := false, false
	write := func(r runlog.Record) {
		if failed {
			return
		}
		if err := w.Write(r); err != nil {
			failed = true
			fmt.Fprintf(warn, "warning: %v\n(training goes on without the run log)\n", err)
		}
	}
	step := func(s Step) runlog.Record {
		logged = s.GlobalStep
		return runlog.Record{Kind: runlog.KindStep, Epoch: s.Epoch, Step: s.GlobalStep, Examples: examples,
			Loss: s.MeanLoss, SamplesPerSec: s.SamplesPerSec, LR: s.LR}
	}
	return Hooks{
		Step: func(s Step) error {
			if !started {
				started = true
				n, err := w.Resume(s.Epoch, s.GlobalStep-1)
				if err != nil && !failed {
					failed = true
					fmt.Fprintf(warn, "warning: %v\n(training goes on without the run log)\n", err)
				}
				examples = n
			}
			examples += int64(s.Examples)
			last = s
			due := every > 0 && s.GlobalStep%int64(every) == 0
			if s.Total > 0 {
				p := int(int64(s.Seen) * PointsPerEpoch / int64(s.Total))
				if s.Epoch != partEpoch {
					part, partEpoch = 0, s.Epoch
				}
				if p > part {
					part, due = p, true
				}
			}
			if due {
				write(step(s))
			}
			return nil
		},
		Epoch: func(e Epoch) error {
			if last.GlobalStep > logged {
				write(step(last))
			}
			write(runlog.Record{Kind: runlog.KindEpoch, Epoch: e.Epoch, Step: last.GlobalStep, Examples: examples,
				Loss: e.TrainLoss, Metrics: e.Metrics, SamplesPerSec: e.SamplesPerSec, LR: e.LR})
			return nil
		},
		End: func(e End) {
			if started && last.GlobalStep > logged {
				write(step(last))
			}
			write(runlog.Record{Kind: runlog.KindEnd, Epoch: e.Epoch, Step: e.GlobalStep, Examples: examples, Reason: e.Reason})
		},
	}
}

// PointsPerEpoch is how many step records LogTo writes an epoch at least,
// one at every such fraction of it.
const PointsPerEpoch = 20
