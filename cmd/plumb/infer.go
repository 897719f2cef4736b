package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/models/translate"
	"github.com/plumbml/plumb/tensor"
)

// inferUsage documents plumb infer.
const inferUsage = `usage:
  plumb infer --explain [--batch N] [--seq-len N] [--no-fusion] MODEL
      the compiled inference plan of MODEL (freshly initialised weights:
      the plan's shape does not depend on their values) before and after
      the fusion passes, each op's shapes and share of the FLOPs
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
	batch := fs.Int("batch", 1, "rows of the input the plan is compiled for")
	seqLen := fs.Int("seq-len", 20, "words of each sequence (text models)")
	noFusion := fs.Bool("no-fusion", false, "compile without the fusion passes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	names := make([]string, 0, len(inferModels))
	for n := range inferModels {
		names = append(names, n)
	}
	sort.Strings(names)
	switch {
	case !*explain:
		return errors.New("infer: only --explain is implemented; see plumb infer --help")
	case fs.NArg() != 1:
		return fmt.Errorf("infer: want one MODEL (%s), got %d arguments", strings.Join(names, ", "), fs.NArg())
	case *batch < 1 || *seqLen < 1:
		return fmt.Errorf("infer: --batch %d and --seq-len %d must be positive", *batch, *seqLen)
	}
	build, ok := inferModels[fs.Arg(0)]
	if !ok {
		return fmt.Errorf("infer: unknown model %q (want %s)", fs.Arg(0), strings.Join(names, ", "))
	}
	forward, in, err := build(*batch, *seqLen)
	if err != nil {
		return err
	}
	g, err := infer.Trace(forward, in...)
	if err != nil {
		return err
	}
	p, err := g.Compile(infer.Options{NoFusion: *noFusion})
	if err != nil {
		return err
	}
	return p.Explain(stdout)
}
