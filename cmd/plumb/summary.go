package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// printSummary prints layers.Summary of model under a title line: each
// layer's output shape and parameter count for one forward pass (forward
// builds it on the tape it is given from an example input), as Keras's
// model.summary() does. The chapter driver calls it for
// `plumb summary <chapter>` with each chapter's model and example batch.
func printSummary(w io.Writer, title string, model layers.Module, forward func(t *graph.Tape) *graph.Value) error {
	s, err := layers.Summary(model, forward)
	if err != nil {
		return fmt.Errorf("summary %s: %w", title, err)
	}
	fmt.Fprintf(w, "%s\n\n%s", title, s)
	return nil
}

// summaryCommand is `plumb summary mnist [--model cnn|mlp]`: the model's
// layers on one 1×28×28 image. The other chapters join through the
// chapter driver's table (each row has its model and an example batch).
func summaryCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(stdout, "usage: plumb summary mnist [--model cnn|mlp]   each layer's output shape and parameters, as Keras's model.summary()")
		if len(args) == 0 {
			return errUsage
		}
		return flag.ErrHelp
	}
	if args[0] != "mnist" {
		return fmt.Errorf("summary: chapter %q: this build summarises mnist", args[0])
	}
	fs := flag.NewFlagSet("summary mnist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "cnn", "network: cnn or mlp")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	net, err := mnist.New(*model, tensor.NewRNG(1))
	if err != nil {
		return err
	}
	return printSummary(stdout, "mnist "+*model+" on one 1×28×28 image", net, func(t *graph.Tape) *graph.Value {
		return net.Forward(t.Const(tensor.Zeros(tensor.Float32, 1, 1, 28, 28)))
	})
}
