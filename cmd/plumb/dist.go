package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/train"
)

// distFlags are the flags of a data-parallel run (plumb train --dist).
type distFlags struct {
	lossTrace  *string
	evalEvery  *int
	evalImages *int
	target     *float64
}

// distUsage describes --dist, which every train command has.
const distUsage = "data-parallel training: every process mpirun started trains on its shard at --batch examples a step; rank 0 prints, logs, evaluates and saves (default: on when mpirun started several processes)"

func addDistFlags(fs *flag.FlagSet) distFlags {
	return distFlags{
		lossTrace:  fs.String("loss-trace", "", "with --dist: write every step's loss over all ranks here (lines: epoch step loss)"),
		evalEvery:  fs.Int("eval-every", 0, "with --dist: also measure test accuracy every N steps (on --eval-images test images, timer paused) to report the training time to --target"),
		evalImages: fs.Int("eval-images", 1000, "test images for --eval-every"),
		target:     fs.Float64("target", 0.6, "test accuracy whose time --eval-every reports"),
	}
}

// joinGroup joins the processes mpirun started (or trains alone) for any
// train command and checks that every rank runs the same recipe: the
// settings that change the arithmetic and the datasets' sizes (a run
// log's configuration, and the run's name); the ranks compare it
// (dist.Agree), and the trainer compares the model's parameters when it
// starts (dist.Replicas.SyncParams). It returns the
// train.Replicas to set in the train.Config, whether this is rank 0, and
// leave, which prints every rank's peak memory on rank 0 and leaves the
// group: call it after training succeeded, on every rank; after an error,
// return it without leave (leave's collectives would wait for ranks still
// training): main ends every rank (dist.Abort).
// Ranks other than 0 print nothing: stdout and stderr become io.Discard
// there, so the command's progress, logs and epoch lines come from rank 0.
func joinGroup(batch int, recipe runlog.Record, stdout, stderr *io.Writer) (rp train.Replicas, leader bool, leave func(io.Writer) error, err error) {
	comm, err := dist.Open()
	if err != nil {
		return nil, false, nil, err
	}
	settings := maps.Clone(recipe.Config)
	if settings == nil {
		settings = map[string]any{}
	}
	settings["batch"] = batch
	fp := dist.RecipeFingerprint(settings)
	fp.Add("recipe run", recipe.Model) // last: a difference in a setting names the setting
	if err := dist.Agree(comm, fp); err != nil {
		return nil, false, nil, err
	}
	if comm.Rank() != 0 {
		*stdout, *stderr = io.Discard, io.Discard
	}
	fmt.Fprintf(*stdout, "data-parallel over %d process(es) (MPI: %v): batch %d per process, %d in all\n",
		comm.Size(), dist.MPI, batch, batch*comm.Size())
	leave = func(stdout io.Writer) error { return errors.Join(printPeaks(comm, stdout), comm.Close()) }
	return dist.NewReplicas(comm, 0), comm.Rank() == 0, leave, nil
}

// distHooks are the hooks of --loss-trace and --eval-every, for rank 0,
// and the function that closes the trace.
func distHooks(f distFlags, probe func(int) train.Evaluator, stdout io.Writer) ([]train.Hooks, func() error, error) {
	var hooks []train.Hooks
	h, closeTrace, err := traceHook(*f.lossTrace)
	if err != nil {
		return nil, nil, err // exiting without MPI_Finalize ends the job: no collective here
	}
	if h != nil {
		hooks = append(hooks, *h)
	}
	if *f.evalEvery > 0 {
		if probe == nil {
			return nil, nil, errors.Join(errors.New("--eval-every: this chapter has no quick accuracy probe"), closeTrace())
		}
		hooks = append(hooks, targetHook(f, probe(*f.evalImages), stdout))
	}
	return hooks, closeTrace, nil
}

// printPeaks prints every rank's peak resident memory (a collective).
func printPeaks(comm dist.Comm, stdout io.Writer) error {
	peak, err := peakRSS()
	if err != nil {
		peak = -1
	}
	all, err := comm.Allgather([]byte(strconv.FormatInt(peak, 10)))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "peak memory (VmHWM) per rank, MiB:")
	for _, b := range all {
		kb, _ := strconv.ParseInt(string(b), 10, 64)
		fmt.Fprintf(stdout, " %.0f", float64(kb)/1024)
	}
	fmt.Fprintln(stdout)
	return nil
}

// traceHook writes every step's loss to path (nothing when path is "").
func traceHook(path string) (*train.Hooks, func() error, error) {
	if path == "" {
		return nil, func() error { return nil }, nil
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	w := bufio.NewWriter(file)
	h := &train.Hooks{Step: func(s train.Step) error {
		_, err := fmt.Fprintf(w, "%d %d %.9g\n", s.Epoch, s.Step, s.Loss)
		return err
	}}
	return h, func() error { return errors.Join(w.Flush(), file.Close()) }, nil
}

// targetHook measures test accuracy every --eval-every steps on the first
// --eval-images test images and reports when it first reaches --target,
// in training time (the measurements' own time left out).
func targetHook(f distFlags, probe train.Evaluator, stdout io.Writer) train.Hooks {
	reached := false
	var began time.Time
	var paused time.Duration
	return train.Hooks{Step: func(s train.Step) error {
		if began.IsZero() {
			began = time.Now().Add(-s.Elapsed) // the run's start
		}
		if reached || s.GlobalStep%int64(*f.evalEvery) != 0 {
			return nil
		}
		t := time.Now()
		m, err := probe(nil)
		paused += time.Since(t)
		if err != nil {
			return err
		}
		acc := m["accuracy"]
		if acc >= *f.target {
			reached = true
			fmt.Fprintf(stdout, "test accuracy %.4f >= %g after %d steps, %s of training\n",
				acc, *f.target, s.GlobalStep, (time.Since(began) - paused).Round(time.Millisecond))
		}
		return nil
	}}
}

// peakRSS is this process's peak resident memory in KiB (Linux's VmHWM).
func peakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
