package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
)

// printSummary prints layers.Summary of model under a title line: each
// layer's output shape and parameter count for one forward pass (forward
// builds it on the tape it is given from an example input), as Keras's
// model.summary() does.
func printSummary(w io.Writer, title string, model layers.Module, forward func(t *graph.Tape) *graph.Value) error {
	s, err := layers.Summary(model, forward)
	if err != nil {
		return fmt.Errorf("summary %s: %w", title, err)
	}
	fmt.Fprintf(w, "%s\n\n%s", title, s)
	return nil
}

// summaryCommand is plumb summary <chapter> [flags]: the chapter's model,
// built as plumb train builds it with the same flags (its dictionaries
// sized by the data, so --data is needed where train needs it), run once
// through its loss on the first training batch (of --batch examples, 1
// unless set), its layers listed by printSummary. What the data loading
// prints goes to stderr, the summary alone to stdout.
func summaryCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintf(stdout, "usage: plumb summary <chapter> [--model M] [--data DIR] [--batch N] [chapter flags]   each layer's output shape and parameters, as Keras's model.summary()\nchapters: %v\n", chapterNames())
		if len(args) == 0 {
			return errUsage
		}
		return flag.ErrHelp
	}
	spec, err := findChapter(args[0])
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	f := newChapterFlags("summary "+spec.Name, stderr, 1, 1, spec.LR, spec.Folders)
	c := spec.New()
	c.Flags(f.fs)
	if err := f.parse(args[1:]); err != nil {
		return err
	}
	dir, looked, err := chapterDir(spec, f.dir)
	if err != nil {
		return err
	}
	setup, err := c.Train(dir, f.options(), stderr)
	if err != nil {
		return lookedIn(err, looked)
	}
	var first *data.Batch
	for b, err := range setup.Train.Batches(0) {
		if err != nil {
			return fmt.Errorf("summary %s: the first training batch: %w", spec.Name, err)
		}
		first = b
		break
	}
	if first == nil {
		return fmt.Errorf("summary %s: the training set has no batch", spec.Name)
	}
	name := spec.Name
	if m, ok := setup.Record["model"].(string); ok {
		name += " " + m
	}
	title := fmt.Sprintf("%s on one batch of %d %s (through its loss)", name, first.Len(), spec.Unit)
	return printSummary(stdout, title, setup.Model, func(t *graph.Tape) *graph.Value {
		loss, _ := setup.Model.Loss(t, first)
		return loss
	})
}
