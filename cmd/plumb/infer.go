package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/tensor"
)

// inferUsage documents plumb infer.
const inferUsage = `usage:
  plumb infer --load CKPT [--model M] [--batch N] [--no-fusion] [FILE...]
      the checkpoint's predictions for the inputs in the files, or on stdin,
      in the formats and with the output of plumb predict (images for
      mnist and cifar10, review lines for sentiment), run in batches of
      N (default 64) on compiled inference plans (package infer), one
      plan per batch signature; --model, when given, must be the model
      the checkpoint holds
  plumb infer --explain [--batch N] [--seq-len N] [--no-fusion] MODEL
  plumb infer --explain --load CKPT [--batch N] [--seq-len N] [--no-fusion]
      the compiled inference plan of MODEL (freshly initialised weights:
      the plan's shape does not depend on their values), or of the
      checkpoint's model, before and after the fusion passes, each op's
      shapes and share of the FLOPs
      MODEL: mnist-mlp, mnist-cnn, resnet32, text-cnn, text-lstm, translate-encoder
`

// inferModels builds each model plumb infer knows as a forward pass on an
// example input of batch rows (sequences of seqLen words).
var inferModels = map[string]func(batch, seqLen int) (infer.Forward, []*tensor.Tensor, error){
	"mnist-mlp": func(batch, _ int) (infer.Forward, []*tensor.Tensor, error) { return mnistForward("mlp", batch) },
	"mnist-cnn": func(batch, _ int) (infer.Forward, []*tensor.Tensor, error) { return mnistForward("cnn", batch) },
	"resnet32": func(batch, _ int) (infer.Forward, []*tensor.Tensor, error) {
		m, err := cifar.New("resnet32", tensor.NewRNG(1))
		if err != nil {
			return nil, nil, err
		}
		return imageForward(m.Forward), []*tensor.Tensor{tensor.Zeros(tensor.Float32, batch, 3, 32, 32)}, nil
	},
	"text-cnn": func(batch, seqLen int) (infer.Forward, []*tensor.Tensor, error) {
		return textForward("cnn", batch, seqLen)
	},
	"text-lstm": func(batch, seqLen int) (infer.Forward, []*tensor.Tensor, error) {
		return textForward("lstm", batch, seqLen)
	},
	"translate-encoder": func(batch, seqLen int) (infer.Forward, []*tensor.Tensor, error) {
		m, err := translate.New(translate.DefaultSizes(inferVocab, inferVocab), tensor.NewRNG(1))
		if err != nil {
			return nil, nil, err
		}
		ids, off := inferWords(batch, seqLen)
		return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return m.Encode(tape, &tensor.Ragged{Values: in[0], Offsets: off}).H
		}, []*tensor.Tensor{ids}, nil
	},
}

// inferVocab is the dictionary size of the text models plumb infer builds.
const inferVocab = 5000

func imageForward(f func(*graph.Value) *graph.Value) infer.Forward {
	return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value { return f(tape.Const(in[0])) }
}

func mnistForward(name string, batch int) (infer.Forward, []*tensor.Tensor, error) {
	m, err := mnist.New(name, tensor.NewRNG(1))
	if err != nil {
		return nil, nil, err
	}
	return imageForward(m.Forward), []*tensor.Tensor{tensor.Zeros(tensor.Float32, batch, 1, 28, 28)}, nil
}

func textForward(name string, batch, seqLen int) (infer.Forward, []*tensor.Tensor, error) {
	m, err := sentiment.New(name, inferVocab, tensor.NewRNG(1))
	if err != nil {
		return nil, nil, err
	}
	ids, off := inferWords(batch, seqLen)
	return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return m.Logits(tape, &tensor.Ragged{Values: in[0], Offsets: off})
	}, []*tensor.Tensor{ids}, nil
}

// inferWords returns batch sequences of seqLen word ids (all id 1) and
// their offsets.
func inferWords(batch, seqLen int) (*tensor.Tensor, []int) {
	off := make([]int, batch+1)
	for i := range off {
		off[i] = i * seqLen
	}
	ids := tensor.Zeros(tensor.Int64, batch*seqLen)
	ids.Fill(1)
	return ids, off
}

// inferCommand is plumb infer.
func inferCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("infer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, inferUsage) }
	explain := fs.Bool("explain", false, "print the plan before and after the passes")
	load := fs.String("load", "", "the checkpoint (written by plumb train --save) to run")
	model := fs.String("model", "", "with --load: the model the checkpoint must hold (default: whichever it holds)")
	batch := fs.Int("batch", 0, "rows a plan runs: with --load, inputs a batch (default 64); with --explain, the plan's batch (default 1)")
	seqLen := fs.Int("seq-len", 20, "words of each sequence (text models, --explain)")
	noFusion := fs.Bool("no-fusion", false, "compile without the fusion passes")
	var rest []string
	for { // inputs and flags in any order, as plumb predict takes them
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
	names := modelNames()
	switch {
	case !*explain && *load == "":
		return errors.New("infer: want --load CKPT (predictions) or --explain (the plan); see plumb infer --help")
	case (isSet(fs, "batch") && *batch < 1) || *seqLen < 1:
		return fmt.Errorf("infer: --batch %d and --seq-len %d must be positive", *batch, *seqLen)
	case *model != "" && *load == "":
		return fmt.Errorf("infer: --model %s: only with --load (with --explain, name the MODEL: %s)", *model, strings.Join(names, ", "))
	}
	opts := infer.Options{NoFusion: *noFusion}
	if *load != "" {
		r, err := restorePlanned(*load, *model)
		if err != nil {
			return fmt.Errorf("infer: %w", err)
		}
		if *explain {
			if len(rest) > 0 {
				return fmt.Errorf("infer --explain --load: unexpected argument %q (the plan is of the checkpoint's model)", rest[0])
			}
			return r.explain(stdout, max(*batch, 1), *seqLen, opts)
		}
		if *batch == 0 {
			*batch = 64
		}
		if err := r.predict(chapter.Input{Files: rest, Stdin: stdin}, *batch, opts, stdout); err != nil {
			return fmt.Errorf("infer %s: %w", r.spec.Name, err)
		}
		return nil
	}
	if len(rest) != 1 {
		return fmt.Errorf("infer: want one MODEL (%s), got %d arguments", strings.Join(names, ", "), len(rest))
	}
	build, ok := inferModels[rest[0]]
	if !ok {
		return fmt.Errorf("infer: unknown model %q (want %s)", rest[0], strings.Join(names, ", "))
	}
	forward, in, err := build(max(*batch, 1), *seqLen)
	if err != nil {
		return err
	}
	return explainPlan(stdout, forward, in, opts)
}

// modelNames are the models of inferModels, sorted.
func modelNames() []string {
	names := make([]string, 0, len(inferModels))
	for n := range inferModels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// explainPlan traces forward on in, compiles it and prints the plan.
func explainPlan(w io.Writer, forward infer.Forward, in []*tensor.Tensor, opts infer.Options) error {
	g, err := infer.Trace(forward, in...)
	if err != nil {
		return err
	}
	p, err := g.Compile(opts)
	if err != nil {
		return err
	}
	return p.Explain(w)
}

// planned is a checkpoint's model, restored, of a chapter that runs its
// predictions as one forward pass (chapter.Plannable).
type planned struct {
	spec chapter.Spec
	p    chapter.Planned
	m    chapter.Model
}

// restorePlanned rebuilds and loads the model of the checkpoint at load,
// whichever chapter wrote it; model, when not empty, is the --model the
// checkpoint must hold (the chapter's Restore says what it holds
// otherwise, as plumb predict does).
func restorePlanned(load, model string) (*planned, error) {
	meta, err := checkpoint.Meta(load)
	if err != nil {
		return nil, err
	}
	name, ok := meta[chapter.KeyChapter]
	if !ok {
		return nil, fmt.Errorf("%s names no chapter in its metadata (%q): it predates checkpoints that know their model, or another program wrote it", load, chapter.KeyChapter)
	}
	spec, err := findChapter(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", load, err)
	}
	c := spec.New()
	pc, ok := c.(chapter.Plannable)
	if !ok {
		return nil, fmt.Errorf("%s holds a %s model, which has no inference plan path (plumb infer --load runs %s): use plumb predict %s --load %s",
			load, name, strings.Join(plannedChapters(), ", "), name, load)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.Flags(fs)
	if f := fs.Lookup("model"); f != nil {
		if err := f.Value.Set(model); err != nil { // "": the model the checkpoint holds
			return nil, fmt.Errorf("--model %q: %w", model, err)
		}
	} else if model != "" {
		return nil, fmt.Errorf("--model %s: the %s chapter has one model; drop --model", model, name)
	}
	m, err := c.Restore(meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", load, err)
	}
	if err := checkpoint.Load(load, m.Params(), nil); err != nil {
		return nil, err
	}
	p, err := pc.Plan() // after Restore: the parts read what it restored (dictionaries, class names)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", load, err)
	}
	return &planned{spec: spec, p: p, m: m}, nil
}

// plannedChapters names the chapters whose models plumb infer --load runs.
func plannedChapters() []string {
	var names []string
	for _, s := range chapters {
		if _, ok := s.New().(chapter.Plannable); ok {
			names = append(names, s.Name)
		}
	}
	return names
}

// explain prints the plan of the model's pass on example inputs of batch
// rows (sequences of seqLen words).
func (r *planned) explain(w io.Writer, batch, seqLen int, opts infer.Options) error {
	forward, _, err := r.p.Forward(r.m)
	if err != nil {
		return err
	}
	in, err := r.p.Example(r.m, batch, seqLen)
	if err != nil {
		return err
	}
	return explainPlan(w, forward, in, opts)
}

// predict reads in as plumb predict does, runs the model's pass on
// compiled plans, batch inputs at a time (an infer.Cache keeps a plan per
// batch signature: the full batches share one, the last may need its own,
// and every batch of sequences has its own offsets), and prints each
// batch's predictions as plumb predict does.
func (r *planned) predict(in chapter.Input, batch int, opts infer.Options, stdout io.Writer) error {
	forward, static, err := r.p.Forward(r.m)
	if err != nil {
		return err
	}
	cache, err := infer.NewCache(forward, infer.CacheOptions{Compile: opts, Static: static})
	if err != nil {
		return err
	}
	q, err := r.p.Queries(r.m, in)
	if err != nil {
		return err
	}
	if q.Len() == 0 {
		return errors.New("no input: every line or file was empty")
	}
	for from := 0; from < q.Len(); from += batch {
		to := min(from+batch, q.Len())
		x, err := q.Inputs(from, to)
		if err != nil {
			return err
		}
		plan, err := cache.Plan(x...)
		if err != nil {
			return fmt.Errorf("inputs %d to %d: %w", from+1, to, err)
		}
		outs := plan.Outputs()
		if len(outs) != 1 {
			return fmt.Errorf("the plan has %d outputs, want 1", len(outs))
		}
		y := tensor.Empty(outs[0].DType, outs[0].Shape...)
		if err := plan.Run(y, x...); err != nil {
			return fmt.Errorf("inputs %d to %d: %w", from+1, to, err)
		}
		if err := r.p.Report(stdout, q.Names[from:to], y); err != nil {
			return err
		}
	}
	return nil
}
