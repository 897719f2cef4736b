package main

import (
	"io"

	trainpkg "github.com/plumbml/plumb/train"
)

// interruptible makes a training command survive Ctrl-C: the first SIGINT
// or SIGTERM lets the run finish its step, save cfg.StatePath and end its
// log with an end record, after which train.Run returns an error wrapping
// train.ErrInterrupted, which exitStatus turns into status 130; a second
// signal quits at once (train.NotifyInterrupt). Give the run a StatePath
// (--state) so that the interrupted run leaves a file for --resume. Call
// stop when training is over, so that a later Ctrl-C ends the process as
// usual.
func interruptible[B any](cfg *trainpkg.Config[B], stderr io.Writer) (stop func()) {
	ch, stop := trainpkg.NotifyInterrupt(stderr)
	cfg.Interrupt = ch
	return stop
}

// interruptHooks is interruptible for a command that trains through a
// model's own Train function, which takes hooks (models/mnist): it
// appends train.InterruptHooks to hooks.
func interruptHooks(hooks *[]trainpkg.Hooks, stderr io.Writer) (stop func()) {
	ch, stop := trainpkg.NotifyInterrupt(stderr)
	*hooks = append(*hooks, trainpkg.InterruptHooks(ch))
	return stop
}
