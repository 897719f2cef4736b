package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plumbml/plumb/bench"
	"github.com/plumbml/plumb/bench/kpi"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/runlog/plot"
	"github.com/plumbml/plumb/runlog/tensorboard/tblog"
)

// parseRuns parses flags and run directories in any order (the flag
// package alone stops at the first directory) and reads every run; it
// returns the runs and their directories.
func parseRuns(fs *flag.FlagSet, args []string) ([]*runlog.Run, []string, error) {
	var dirs []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		dirs = append(dirs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(dirs) == 0 {
		return nil, nil, fmt.Errorf("%s: name at least one run directory (written by plumb train mnist --log DIR)", fs.Name())
	}
	runs := make([]*runlog.Run, len(dirs))
	for i, d := range dirs {
		r, err := runlog.Read(d)
		if err != nil {
			return nil, nil, err
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(fs.Output(), "warning: %s\n", w)
		}
		runs[i] = r
	}
	return runs, dirs, nil
}

// openLog opens the run log in dir for a training run: a fresh log, or,
// when the run resumes from a --state file (resume is its path), the
// existing log continued, so that no earlier record is lost
// (runlog.Append); the resume record names the file.
//
// A fresh run into a directory whose log already holds records is
// refused before training (runlog.Start): it would replace that run's
// records, and the error says to resume it or to log elsewhere. Any other
// failure to open the log (a directory that cannot be written, a full
// disk, an existing log that cannot be read back) does not stop the run:
// openLog prints one warning to warn and returns a nil Writer, and the run
// trains and saves (--save, --state, --best) without a log, as
// train.LogTo does when a later record cannot be written.
func openLog(dir, resume string, run runlog.Record, warn io.Writer) (*runlog.Writer, error) {
	var w *runlog.Writer
	var err error
	if resume == "" {
		w, err = runlog.Start(dir, run)
	} else {
		if run.Config == nil {
			run.Config = map[string]any{}
		}
		run.Config["resume"] = resume
		w, err = runlog.Append(dir, run)
	}
	switch {
	case errors.Is(err, runlog.ErrExists):
		return nil, fmt.Errorf("train: --log %s: %w", dir, err)
	case err != nil:
		fmt.Fprintf(warn, "warning: %v\n(training goes on without the run log)\n", err)
		return nil, nil
	}
	if m, err := tblog.NewMirror(dir); err != nil {
		fmt.Fprintf(warn, "warning: %v\n(training goes on without TensorBoard's event file)\n", err)
	} else {
		w.SetMirror(m, warn)
	}
	return w, nil
}

// plotRuns draws runs' curves into one PNG.
func plotRuns(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "PNG to write (default: plot.png in the first run's directory)")
	maxMetrics := fs.Int("max-metrics", plot.DefaultOptions.MaxMetrics, "draw at most this many evaluation metrics (the first by name)")
	runs, dirs, err := parseRuns(fs, args)
	if err != nil {
		return err
	}
	if *maxMetrics < 1 {
		return fmt.Errorf("plot: --max-metrics %d, want at least 1", *maxMetrics)
	}
	path := *out
	if path == "" {
		path = filepath.Join(dirs[0], "plot.png")
	}
	omitted, err := plot.Draw(runs, path, plot.Options{MaxMetrics: *maxMetrics})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%d runs)\n", path, len(runs))
	noteOmitted(stdout, omitted, *maxMetrics)
	return nil
}

// noteOmitted names the metrics a plot left out, the first ten of them.
func noteOmitted(w io.Writer, omitted []string, drawn int) {
	if len(omitted) == 0 {
		return
	}
	names := strings.Join(omitted[:min(10, len(omitted))], ", ")
	if len(omitted) > 10 {
		names += ", ..."
	}
	fmt.Fprintf(w, "left out %d metrics past the first %d by name (--max-metrics): %s\n", len(omitted), drawn, names)
}

// compareRuns prints runs side by side as a markdown table and, with -o,
// draws their curves together.
func compareRuns(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "also draw the runs' curves into this PNG")
	runs, _, err := parseRuns(fs, args)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, runlog.Table(runs))
	if *out != "" {
		omitted, err := plot.Draw(runs, *out, plot.DefaultOptions)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\ncurves: %s\n", *out)
		noteOmitted(stdout, omitted, plot.DefaultOptions.MaxMetrics)
	}
	return nil
}

// checkKPIs prints the runs' table and checks Plumb's runs against the
// KPI file, by default the one embedded in the binary (bench/kpi.json), so
// that it works from any directory. Speed KPIs relative to the reference
// benchmark are scaled by its speed measured here and now
// (kpi.MeasureReference), so that a busy machine does not fail a healthy
// build. It fails when a KPI is worse than its baseline by more than its
// tolerance.
func checkKPIs(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kpi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "the KPI file: baselines and tolerances per model and metric (default: bench/kpi.json as embedded in this binary)")
	ref := fs.Float64("reference", 0, "the reference benchmark's GFLOP/s on this machine, instead of measuring it")
	refTime := fs.Duration("reference-time", 2*time.Second, "how long to measure the reference benchmark")
	runs, _, err := parseRuns(fs, args)
	if err != nil {
		return err
	}
	if !(*ref >= 0) || math.IsInf(*ref, 0) || *refTime <= 0 {
		return fmt.Errorf("kpi: --reference %v, --reference-time %v: want a reference >= 0 (0: measure it) and a positive time", *ref, *refTime)
	}
	var ks []kpi.KPI
	if *file == "" {
		ks, err = kpi.Parse(bytes.NewReader(bench.KPIFile), bench.KPIFileName)
	} else {
		ks, err = kpi.Load(*file)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, runlog.Table(runs))
	fmt.Fprintln(stdout)
	if *ref == 0 && slices.ContainsFunc(ks, func(k kpi.KPI) bool { return k.Reference > 0 }) {
		if *ref, err = kpi.MeasureReference(*refTime); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "reference benchmark: %.2f GFLOP/s (float32 %d³ matrix products for %s)\n\n", *ref, kpi.ReferenceSize, *refTime)
	}
	res, err := kpi.CheckReference(ks, runs, *ref)
	if err != nil {
		return err
	}
	if err := kpi.Report(stdout, res); err != nil {
		return errors.New("kpi: FAILED (see the table above)")
	}
	return nil
}
