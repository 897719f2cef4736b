package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/bert"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/recommender"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/models/srl"
	"github.com/plumbml/plumb/models/transformer"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/models/word2vec"
	"github.com/plumbml/plumb/runlog"
	trainpkg "github.com/plumbml/plumb/train"
)

// chapters is the table of the book's chapters: plumb train, eval and
// predict find a chapter here and run it through the one driver below.
var chapters = []chapter.Spec{mnist.Spec, cifar.Spec, word2vec.Spec, recommender.Spec, sentiment.Spec, srl.Spec, translate.Spec, transformer.Spec, bert.MLMSpec, bert.ClassifySpec}

// findChapter returns the chapter called name.
func findChapter(name string) (chapter.Spec, error) {
	var names []string
	for _, s := range chapters {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return chapter.Spec{}, fmt.Errorf("unknown chapter %q (this build knows %s)", name, strings.Join(names, ", "))
}

// stdin is what plumb predict reads when it names no files; tests replace it.
var stdin io.Reader = os.Stdin

// chapterDir finds the chapter's data: --data (or $PLUMB_DATA) may be the
// dataset root, holding the chapter's folder, or that folder itself. It
// returns the folder found and every place it looked, for errors.
func chapterDir(spec chapter.Spec, flagValue string) (string, []string, error) {
	d := data.Dir(flagValue)
	if d == "" {
		if spec.NoData {
			return "", nil, nil
		}
		return "", nil, fmt.Errorf("%s: no data: pass --data DIR (the dataset root holding %s, or that folder itself) or set %s",
			spec.Name, strings.Join(spec.Folders, " or "), data.EnvDir)
	}
	var looked []string
	for _, f := range spec.Folders {
		p := filepath.Join(d, f)
		looked = append(looked, p)
		if _, err := os.Stat(p); err == nil {
			return p, looked, nil
		}
	}
	return d, append(looked, d), nil
}

// lookedIn adds to a data loader's error where the driver looked.
func lookedIn(err error, looked []string) error {
	if err == nil || len(looked) < 2 {
		return err
	}
	return fmt.Errorf("%w\n(looked in %s)", err, strings.Join(looked, ", "))
}

// trainChapter is plumb train <chapter>.
func trainChapter(spec chapter.Spec, args []string, stdout, stderr io.Writer) (err error) {
	f := newChapterFlags("train "+spec.Name, stderr, spec.Epochs, spec.Batch, spec.LR, spec.Folders)
	if spec.Best != "" {
		f.saveBest(spec.Best)
	}
	df := addDistFlags(f.fs)
	c := spec.New()
	c.Flags(f.fs)
	if err := f.parse(args); err != nil {
		return err
	}
	dir, looked, err := chapterDir(spec, f.dir)
	if err != nil {
		return err
	}
	setup, err := c.Train(dir, f.options(), stdout)
	if err != nil {
		return lookedIn(err, looked)
	}
	meta, err := c.Meta()
	if err != nil {
		return err
	}
	closeDev, err := moveModel(f.device, setup.Model.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = joinErr(err, closeDev()) }()
	opt, lr, err := setup.Optimizer()
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, setup.Describe)
	name := spec.Name
	if m, ok := setup.Record["model"].(string); ok {
		name += "-" + m
	}
	if name = f.runName(name, spec.Epochs, spec.Batch); setup.RunName != "" {
		name = setup.RunName
	}
	return runChapter(f, df, spec, trainpkg.Config[*data.Batch]{
		Params: setup.Model.Params(), Optimizer: opt, LR: lr, RNG: setup.RNG, Train: setup.Train, Loss: setup.Model.Loss,
		Evaluate: setup.Evaluate, Monitor: setup.Monitor, Maximize: setup.Maximize, Hooks: setup.Hooks, Meta: meta,
		Device: graph.DeviceOf(setup.Model.Params()), HostFields: setup.HostFields,
	}, setup.Probe, runlog.Record{Model: name, Config: setup.Record}, stdout, stderr)
}

// restored is a checkpoint's model, rebuilt and loaded.
type restored struct {
	c    chapter.Chapter
	m    chapter.Model
	load string
	f    *chapterFlags
}

// restore parses the flags of eval or predict (files are the arguments
// left, for predict), rebuilds the model the checkpoint names and loads
// its parameters.
func restore(cmd string, spec chapter.Spec, args []string, stderr io.Writer, files *[]string) (*restored, error) {
	f := newChapterFlags(cmd+" "+spec.Name, stderr, 1, spec.Batch, spec.LR, spec.Folders)
	f.fs.Lookup("load").Usage = "the checkpoint (written by plumb train " + spec.Name + " --save): its metadata names the model"
	c := spec.New()
	c.Flags(f.fs)
	if files == nil {
		if err := f.parse(args); err != nil {
			return nil, err
		}
	} else {
		for { // files and flags in any order
			if err := f.fs.Parse(args); err != nil {
				return nil, err
			}
			if f.fs.NArg() == 0 {
				break
			}
			*files, args = append(*files, f.fs.Arg(0)), f.fs.Args()[1:]
		}
		if err := f.parse(nil); err != nil {
			return nil, err
		}
	}
	if f.load == "" {
		return nil, fmt.Errorf("%s %s: %w", cmd, spec.Name, errNoLoad)
	}
	if m := f.fs.Lookup("model"); m != nil && !isSet(f.fs, "model") {
		m.Value.Set("") // unset: the model the checkpoint holds
	}
	meta, err := checkpoint.Meta(f.load)
	if err != nil {
		return nil, err
	}
	if got := meta[chapter.KeyChapter]; got != "" && got != spec.Name {
		return nil, fmt.Errorf("%s holds a %s model: plumb %s %s --load %s", f.load, got, cmd, got, f.load)
	}
	m, err := c.Restore(meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.load, err)
	}
	if err := checkpoint.Load(f.load, m.Params(), nil); err != nil {
		return nil, err
	}
	return &restored{c: c, m: m, load: f.load, f: f}, nil
}

// isSet reports whether the command line set the flag called name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// evalChapter is plumb eval <chapter>: the checkpoint's model measured on
// the chapter's evaluation data.
func evalChapter(spec chapter.Spec, args []string, stdout, stderr io.Writer) (err error) {
	r, err := restore("eval", spec, args, stderr, nil)
	if err != nil {
		return err
	}
	dir, looked, err := chapterDir(spec, r.f.dir)
	if err != nil {
		return err
	}
	closeDev, err := moveModel(r.f.device, r.m.Params(), stderr)
	if err != nil {
		return err
	}
	defer func() { err = joinErr(err, closeDev()) }()
	ev, what, err := r.c.Evaluate(r.m, dir, r.f.options(), stderr)
	if err != nil {
		return lookedIn(err, looked)
	}
	bar, began := trainpkg.NewBar(stderr), time.Now()
	bar.Unit = spec.Unit
	m, err := ev(func(done, total int) {
		p := trainpkg.Progress{Phase: trainpkg.Evaluating, Epoch: 1, Epochs: 1, Done: done, Total: total}
		if p.SamplesPerSec = float64(done) / time.Since(began).Seconds(); p.SamplesPerSec > 0 && done < total {
			p.ETA = time.Duration(float64(total-done) / p.SamplesPerSec * float64(time.Second))
		}
		bar.Update(p)
	})
	bar.Clear()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s from %s on %s:%s\n", spec.Name, r.load, what, strings.TrimPrefix(formatMetrics(m), ","))
	return nil
}

// predictChapter is plumb predict <chapter>: the checkpoint's model on
// the inputs named (files) or on stdin.
func predictChapter(spec chapter.Spec, args []string, stdout, stderr io.Writer) (err error) {
	var files []string
	r, err := restore("predict", spec, args, stderr, &files)
	if err != nil {
		return err
	}
	if r.f.device != "cpu" {
		return fmt.Errorf("predict %s: --device %s: predict runs on the CPU", spec.Name, r.f.device)
	}
	if err := r.c.Predict(r.m, chapter.Input{Files: files, Stdin: stdin}, stdout); err != nil {
		return fmt.Errorf("predict %s: %w", spec.Name, err)
	}
	return nil
}

// chapterUsage is the usage of cmd for every chapter, or for spec alone,
// in aligned columns.
func chapterUsage(cmd string, only ...chapter.Spec) string {
	var buf strings.Builder
	b := tabwriter.NewWriter(&buf, 0, 4, 3, ' ', 0)
	for _, s := range chapters {
		if len(only) > 0 && s.Name != only[0].Name {
			continue
		}
		models := ""
		if len(s.Models) > 0 {
			models = " [--model " + strings.Join(s.Models, "|") + "]"
		}
		switch cmd {
		case "train":
			fmt.Fprintf(b, "  plumb train %s%s [flags]\t%s (data: %s/)\n", s.Name, models, s.Title, strings.Join(s.Folders, "/ or "))
		case "eval":
			fmt.Fprintf(b, "  plumb eval %s --load FILE [--data DIR] [--device cpu|cuda]\t%s\n", s.Name, s.Title)
		case "predict":
			fmt.Fprintf(b, "  plumb predict %s --load FILE [FILE...]\t%s\n", s.Name, s.Inputs)
		}
	}
	b.Flush()
	return buf.String()
}

// chapterCommand runs plumb train|eval|predict <chapter> args.
func chapterCommand(cmd string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintf(stdout, "usage:\n%s", chapterUsage(cmd))
		if len(args) == 0 {
			return fmt.Errorf("%s: name a chapter (%s)", cmd, strings.Join(chapterNames(), ", "))
		}
		return flag.ErrHelp
	}
	spec, err := findChapter(args[0])
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if slices.ContainsFunc(args[1:], isHelp) {
		fmt.Fprintf(stdout, "usage:\n%s", chapterUsage(cmd, spec))
	}
	switch cmd {
	case "train":
		return trainChapter(spec, args[1:], stdout, stderr)
	case "eval":
		return evalChapter(spec, args[1:], stdout, stderr)
	}
	return predictChapter(spec, args[1:], stdout, stderr)
}

func chapterNames() []string {
	var names []string
	for _, s := range chapters {
		names = append(names, s.Name)
	}
	return names
}
