package train

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/plumbml/plumb/runlog"
)

// ErrInterrupted is wrapped by the error of a run stopped by
// Config.Interrupt (an *InterruptedError), after the step it was in
// finished and the StatePath file was written.
var ErrInterrupted = errors.New("train: interrupted")

// ExitInterrupted is the status a command exits with after an interrupted
// run: 128 + SIGINT, as a shell reports a process ended by Ctrl-C.
const ExitInterrupted = 130

// InterruptedError says where an interrupted run stopped and where its
// state is, so that the user can continue it (Config.ResumeFrom, or a
// command's --resume).
type InterruptedError struct {
	Epoch      int    // the epoch the run was in (1-based)
	Step       int    // the last step done in it (0: the epoch had ended)
	GlobalStep int64  // steps done in the whole run
	StatePath  string // where the state was saved ("" when the run had no StatePath)
}

func (e *InterruptedError) Error() string {
	if e == nil {
		return ErrInterrupted.Error()
	}
	where := fmt.Sprintf("after step %d of epoch %d", e.Step, e.Epoch)
	if e.Step == 0 {
		where = fmt.Sprintf("after epoch %d", e.Epoch)
	}
	if e.StatePath == "" {
		return fmt.Sprintf("train: interrupted %s (%d steps in all); no state file was set, so nothing was saved to resume from", where, e.GlobalStep)
	}
	return fmt.Sprintf("train: interrupted %s (%d steps in all); the run's state is saved in %s: resume from it (--resume %s) to go on",
		where, e.GlobalStep, e.StatePath, e.StatePath)
}

// Unwrap makes errors.Is(err, ErrInterrupted) true.
func (e *InterruptedError) Unwrap() error { return ErrInterrupted }

// interrupted reports whether Config.Interrupt asks the run to stop. A
// data-parallel run of several ranks ignores it: the ranks would see a
// signal at different steps and wait for each other in the next
// collective for ever.
func (r *run[B]) interrupted() bool {
	if r.cfg.Interrupt == nil || !r.interruptible() {
		return false
	}
	select {
	case <-r.cfg.Interrupt:
		return true
	default:
		return false
	}
}

// interruptible reports whether the run may stop on an interrupt: not a
// data-parallel run of several ranks (see interrupted).
func (r *run[B]) interruptible() bool {
	return r.cfg.Replicas == nil || r.cfg.Replicas.Size() <= 1
}

// InterruptHooks is Config.Interrupt as a hook, for code that hands hooks
// to a training function it does not configure itself (a model's Train
// taking Config.Hooks): once interrupt is closed, the next step's hook
// returns ErrInterrupted, and Run, as for Config.Interrupt, saves
// StatePath after that step and returns an *InterruptedError. A run of
// several ranks ignores it, as it ignores Config.Interrupt.
func InterruptHooks(interrupt <-chan struct{}) Hooks {
	return Hooks{Step: func(Step) error {
		select {
		case <-interrupt:
			return ErrInterrupted
		default:
			return nil
		}
	}}
}

// stopInterrupted saves the run's state after step of epoch e (0: after
// the epoch, whose state is already saved) and returns the run's error.
func (r *run[B]) stopInterrupted(e, step int) error {
	if step > 0 {
		if err := r.saveState(); err != nil {
			return fmt.Errorf("train: interrupted after step %d of epoch %d, and saving the state failed: %w", step, e, err)
		}
	}
	r.res.Stopped = "interrupted"
	return &InterruptedError{Epoch: e, Step: step, GlobalStep: r.st.global(), StatePath: r.cfg.StatePath}
}

// NotifyInterrupt turns the first SIGINT (Ctrl-C) or SIGTERM into a
// Config.Interrupt: the returned channel is closed, and a line on w says
// that the run finishes its step and saves. A second signal ends the
// process at once with status ExitInterrupted, saving nothing, for a user
// who will not wait. stop restores the signals' default handling; call it
// when the run is over.
func NotifyInterrupt(w io.Writer) (interrupt <-chan struct{}, stop func()) {
	if w == nil {
		w = io.Discard
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ch, done := make(chan struct{}), make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				n++
				if n == 1 {
					fmt.Fprintf(w, "\n%v: finishing the step and saving the run's state (again to quit at once, saving nothing)\n", s)
					close(ch)
					continue
				}
				fmt.Fprintf(w, "\n%v again: quitting without saving\n", s)
				os.Exit(ExitInterrupted)
			}
		}
	}()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
		})
	}
}

// End describes how a run ended, for Hooks.End.
type End struct {
	Epoch      int   // the epoch the run was in, or the last it finished
	GlobalStep int64 // steps done in the whole run
	Reason     string
	Err        error // the run's error (nil when it finished or a hook stopped it)
}

// end runs the End hooks with why the run ended.
func (r *run[B]) end(err error) {
	reason := runlog.ReasonFinished
	switch {
	case errors.Is(err, ErrInterrupted):
		reason = runlog.ReasonInterrupted
	case err != nil:
		reason = "error: " + err.Error()
	case r.res.Stopped != "":
		reason = "stopped: " + r.res.Stopped
	}
	e := r.st.epoch()
	if r.st.step() > 0 {
		e++
	}
	end := End{Epoch: e, GlobalStep: r.st.global(), Reason: reason, Err: err}
	for _, h := range r.cfg.Hooks {
		if h.End != nil {
			h.End(end)
		}
	}
}
