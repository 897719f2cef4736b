package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/runlog"
	trainpkg "github.com/plumbml/plumb/train"
)

// chapterFlags are the flags every chapter's train, eval and predict
// commands share.
type chapterFlags struct {
	fs                                     *flag.FlagSet
	epochs, batch, limit, testLimit, every int
	lr                                     float64
	seed                                   uint64
	save, load, dir, logDir, state, resume string
	bestFile                               string
	dist                                   bool
	device                                 string

	// best, when set (saveBest), names the metric whose best epoch --save
	// keeps: the parameters are written after every epoch that improves
	// it (train.Config.BestPath), and --load reads parameters only.
	best string
}

// saveBest makes --save keep the best epoch by metric (described as what,
// e.g. "held-out F1") instead of the state after training.
func (f *chapterFlags) saveBest(what string) {
	f.best = what
	f.fs.Lookup("save").Usage = "write the parameters (safetensors) here after every epoch that improves the " + what
	f.fs.Lookup("load").Usage = "start from these parameters (a file written by --save)"
}

// newChapterFlags declares the common flags with the chapter's recipe as
// defaults; the caller may add its own to fs before parse.
func newChapterFlags(name string, stderr io.Writer, epochs, batch int, lr float64, folders []string) *chapterFlags {
	f := &chapterFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	f.fs.SetOutput(stderr)
	f.fs.IntVar(&f.epochs, "epochs", epochs, "passes over the training set")
	f.fs.IntVar(&f.batch, "batch", batch, "batch size")
	f.fs.Float64Var(&f.lr, "lr", lr, "learning rate")
	f.fs.Uint64Var(&f.seed, "seed", 1, "seed for initialisation and shuffling")
	f.fs.StringVar(&f.save, "save", "", "write a checkpoint (safetensors) here after training")
	f.fs.StringVar(&f.load, "load", "", "start from this checkpoint (parameters and optimizer state)")
	f.fs.StringVar(&f.dir, "data", "", "the dataset root holding "+strings.Join(folders, " or ")+", or that folder itself (default $PLUMB_DATA)")
	f.fs.IntVar(&f.limit, "limit", 0, "train on a seeded random subset of N training examples (0: all), for quick runs")
	f.fs.IntVar(&f.testLimit, "test-limit", 0, "evaluate on a seeded random subset of N examples (0: all)")
	f.fs.StringVar(&f.bestFile, "best", "", "write the parameters of the epoch with the best evaluation here")
	f.fs.StringVar(&f.state, "state", "", "after every epoch, write what a resumed run needs (parameters, optimizer, epoch, step, RNG) to this file")
	f.fs.StringVar(&f.resume, "resume", "", "continue the run saved in this --state file (same flags otherwise)")
	f.fs.StringVar(&f.logDir, "log", "", "write a run log (JSON lines: steps, epochs, metrics, RSS) to this directory, for plumb plot/compare/kpi")
	f.fs.IntVar(&f.every, "log-every", 50, "with --log, a step record every N steps")
	f.fs.BoolVar(&f.dist, "dist", dist.Launched() > 1, distUsage)
	f.fs.StringVar(&f.device, "device", "cpu", "where to train: cpu, or cuda (GPU 0; needs a binary built with -tags cuda)")
	return f
}

// parse parses args and checks every flag that can be checked before the
// data loads, so a mistake never costs a training run.
func (f *chapterFlags) parse(args []string) error {
	if err := parseFlags(f.fs, args); err != nil {
		return err
	}
	name := f.fs.Name()
	switch {
	case f.epochs < 1:
		return fmt.Errorf("%s: --epochs %d, want at least 1", name, f.epochs)
	case f.batch < 1:
		return fmt.Errorf("%s: --batch %d, want at least 1", name, f.batch)
	case f.limit < 0 || f.testLimit < 0:
		return fmt.Errorf("%s: --limit %d, --test-limit %d: want 0 (all examples) or more", name, f.limit, f.testLimit)
	case !(f.lr > 0) || math.IsInf(f.lr, 0):
		return fmt.Errorf("%s: --lr %g, want a positive finite number", name, f.lr)
	case f.every < 1:
		return fmt.Errorf("%s: --log-every %d, want at least 1", name, f.every)
	case f.dist && f.device != "cpu":
		return fmt.Errorf("%s: --dist trains on the CPU; drop --device %s", name, f.device)
	}
	if err := checkDevice(f.device); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if f.save != "" {
		if err := checkpoint.CheckPath(f.save); err != nil {
			return fmt.Errorf("%s: --save: %w", name, err)
		}
	}
	return nil
}

// options are the settings a chapter's model takes from the flags.
func (f *chapterFlags) options() chapter.Options {
	return chapter.Options{Epochs: f.epochs, Batch: f.batch, LR: f.lr, Seed: f.seed, Limit: f.limit, TestLimit: f.testLimit, Every: f.every}
}

// runName names a run's recipe in its log (and so its KPIs): the model,
// then what differs from the book's recipe.
func (f *chapterFlags) runName(model string, epochs, batch int) string {
	name := model
	if f.limit > 0 {
		name += fmt.Sprintf("-limit%d", f.limit)
	}
	if f.epochs != epochs {
		name += fmt.Sprintf("-epochs%d", f.epochs)
	}
	if f.batch != batch {
		name += fmt.Sprintf("-batch%d", f.batch)
	}
	return name
}

// runChapter trains cfg with the flags' epochs, --load, --log, --save,
// --state, --resume and --dist, a progress bar on stderr and one summary
// line per epoch on stdout. With --dist every rank trains on its shard of
// a data.Loader's batches; rank 0 alone logs and saves.
func runChapter(f *chapterFlags, df distFlags, spec chapter.Spec, cfg trainpkg.Config[*data.Batch], probe func(int) trainpkg.Evaluator,
	run runlog.Record, stdout, stderr io.Writer) (err error) {
	cfg.Epochs, cfg.StatePath, cfg.ResumeFrom = f.epochs, f.state, f.resume
	if f.load != "" {
		opt := cfg.Optimizer
		if f.best != "" {
			opt = nil // a best epoch's file holds the parameters alone
		}
		if err := checkpoint.Load(f.load, cfg.Params, opt); err != nil {
			return err
		}
	}
	leader, leave := true, func(io.Writer) error { return nil }
	if f.dist {
		rp, l, lv, err := joinGroup(f.batch, run, &stdout, &stderr)
		if err != nil {
			return err
		}
		cfg.Replicas, leader, leave = rp, l, lv
		if loader, ok := cfg.Train.(*data.Loader); ok {
			shard, err := loader.Shard(rp.Rank(), rp.Size())
			if err != nil {
				return err // exiting without MPI_Finalize ends the job
			}
			cfg.Train = shard
		}
		if leader {
			hooks, closeTrace, err := distHooks(df, probe, stdout)
			if err != nil {
				return err
			}
			defer func() { err = joinErr(err, closeTrace()) }()
			cfg.Hooks = append(cfg.Hooks, hooks...)
		}
	}
	if cfg.BestPath = f.bestFile; f.best != "" {
		cfg.BestPath = f.save // the trainer writes it on rank 0 only
	}
	bar := trainpkg.NewBar(stderr)
	cfg.Progress, cfg.Unit, bar.Unit, run.Unit = bar.Update, spec.Unit, spec.Unit, spec.Unit
	if cfg.StatePath == "" && !f.dist {
		// Ctrl-C always leaves something to --resume: a state file of the
		// run's own, removed once the run ends other than by an interrupt.
		cfg.StatePath = defaultStatePath(spec.Name)
		defer func() {
			if !errors.Is(err, trainpkg.ErrInterrupted) {
				os.Remove(cfg.StatePath)
			}
		}()
	}
	logged := false
	if f.logDir != "" && leader {
		run.Framework = "plumb"
		log, err := openLog(f.logDir, f.resume, run, stderr)
		if err != nil {
			return err
		}
		if logged = log != nil; logged {
			defer log.Close()
			cfg.Hooks = append(cfg.Hooks, trainpkg.LogTo(log, f.every, stderr))
		}
	}
	cfg.Hooks = append(cfg.Hooks, trainpkg.Hooks{Epoch: func(e trainpkg.Epoch) error {
		bar.Clear()
		fmt.Fprintf(stdout, "epoch %d/%d: train loss %.4f%s (%.1f %s/s, %s; eval %s)\n", e.Epoch, f.epochs, e.TrainLoss,
			formatMetrics(e.Metrics), e.SamplesPerSec, spec.Unit, e.Duration.Round(time.Second), e.EvalDuration.Round(time.Second))
		if e.Best && f.best != "" && f.save != "" {
			fmt.Fprintf(stdout, "saved %s (best %s so far)\n", f.save, f.best)
		}
		return nil
	}})
	stop := interruptible(&cfg, stderr)
	defer stop()
	if _, err = trainpkg.Run(cfg); err != nil {
		bar.Clear()
		if f.save != "" && f.best == "" {
			return fmt.Errorf("%w\n(nothing saved to %s)", err, f.save)
		}
		return err
	}
	if f.save != "" && f.best == "" && leader {
		if err := checkpoint.SaveMeta(f.save, cfg.Params, cfg.Optimizer, cfg.Meta); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "saved %s\n", f.save)
	}
	if logged {
		fmt.Fprintf(stdout, "run log in %s (plumb plot %s)\n", f.logDir, f.logDir)
	}
	return leave(stdout)
}

// defaultStatePath is where a run given no --state keeps its state (what
// --resume needs), so that an interrupted run can be continued: a file of
// this process's own in the temporary directory.
func defaultStatePath(chapter string) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("plumb-%s-%d.state.safetensors", chapter, os.Getpid()))
}

// joinErr is errors.Join, kept nil when both are.
func joinErr(a, b error) error { return errors.Join(a, b) }

// formatMetrics lists metrics by name: ", a 0.1234, b 0.5678".
func formatMetrics(m map[string]float64) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, ", %s %.4f", strings.ReplaceAll(k, "_", " "), m[k])
	}
	return b.String()
}

// errNoLoad is the error of a query command run without a checkpoint.
var errNoLoad = errors.New("--load FILE (a checkpoint written by plumb train --save) is required")
