package main

import (
	"io"

	trainpkg "github.com/plumbml/plumb/train"
)

// interruptible makes a training command survive Ctrl-C: the first SIGINT
// or SIGTERM lets the run finish its step, save cfg.StatePath and end its
// log with an end record, after which train.Run returns an error wrapping
// train.ErrInterrupted, which exitStatus turns into status 130; a second
// signal quits at once (train.NotifyInterrupt). runChapter gives every
// run a StatePath (--state, or a file of its own) so that the interrupted
// run leaves a file for --resume. Call stop when training is over, so that
// a later Ctrl-C ends the process as usual.
func interruptible[B any](cfg *trainpkg.Config[B], stderr io.Writer) (stop func()) {
	ch, stop := trainpkg.NotifyInterrupt(stderr)
	cfg.Interrupt = ch
	return stop
}
