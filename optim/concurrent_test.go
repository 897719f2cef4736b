package optim_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// gate is an identity op whose Backward (or, as a schedule, whose LR)
// tells entered that it runs and waits for proceed: the barrier that holds
// one goroutine's Backward or Step in flight while the other one starts.
type gate struct {
	entered, proceed chan struct{}
	used             atomic.Bool // the gate holds the first call only
}

func newGate() *gate { return &gate{entered: make(chan struct{}), proceed: make(chan struct{})} }

func (g *gate) wait() {
	if g.used.Swap(true) {
		return
	}
	close(g.entered)
	<-g.proceed
}

func (*gate) Name() string { return "gate" }

func (*gate) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) { return in[0].Clone(), nil }

func (g *gate) Backward(_ []*tensor.Tensor, _, gout *tensor.Tensor, _ []bool) ([]*tensor.Tensor, error) {
	g.wait()
	return []*tensor.Tensor{gout.Clone()}, nil
}

// LR makes the gate a schedule: it blocks inside Step, which holds its
// parameters then.
func (g *gate) LR(int64) float64 {
	g.wait()
	return 0.1
}

// forward is one step's forward pass of the model y = sum(w · x) on its
// own tape, through g when g is non-nil.
func forward(w *graph.Param, g *gate) (*graph.Tape, *graph.Value) {
	tape := graph.NewTape()
	y := graph.Mul(tape.Param(w), tape.Const(tensor.MustFromSlice([]float64{1, 2, 3}, 3)))
	if g != nil {
		y = tape.Apply(g, y)
	}
	return tape, graph.Sum(y)
}

// Training one model from two goroutines (two tapes, one model, one
// optimizer) is detected and refused with an error naming the parameter,
// never a silent race: a Backward or Step that starts while the other
// goroutine's Backward or Step holds the parameters fails and touches
// nothing, and a Backward whose forward pass read values an optimizer step
// has since changed fails. Each case
// forces the overlap with a barrier (gate), so the result is
// deterministic; run under -race.
func TestTrainingFromTwoGoroutinesRefused(t *testing.T) {
	cases := []struct {
		name string
		// hold is what goroutine A holds in flight (at the gate).
		hold string // "backward" or "step"
		// other is what goroutine B does meanwhile; it returns B's error.
		other func(w *graph.Param, opt optim.Optimizer) error
		want  []string
	}{
		{"backward during backward", "backward", func(w *graph.Param, _ optim.Optimizer) error {
			tape, loss := forward(w, nil)
			return tape.Backward(loss)
		}, []string{`parameter "w" is in use by a Backward while a Backward starts`, "two goroutines"}},
		{"step during backward", "backward", func(_ *graph.Param, opt optim.Optimizer) error {
			return opt.Step()
		}, []string{`parameter "w" is in use by a Backward while an optimizer step starts`}},
		{"step during step", "step", func(_ *graph.Param, opt optim.Optimizer) error {
			return opt.Step()
		}, []string{"Step while another Step of this optimizer runs"}},
		{"forward during step", "step", func(w *graph.Param, _ optim.Optimizer) error {
			tape, loss := forward(w, nil)
			if err := loss.Err(); err != nil {
				return err
			}
			return tape.Backward(loss)
		}, []string{`parameter "w" is being updated by an optimizer step while a forward pass reads it`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := graph.NewParam("w", tensor.MustFromSlice([]float64{1, 1, 1}, 3))
			g := newGate()
			opts := []optim.Option{optim.LR(0.1)}
			if c.hold == "step" {
				opts = []optim.Option{optim.LRSchedule(g)}
			}
			opt, err := optim.NewSGD([]*graph.Param{w}, opts...)
			require.NoError(t, err)
			if c.hold == "step" { // a gradient for A's Step to apply
				tape, loss := forward(w, nil)
				require.NoError(t, tape.Backward(loss))
			}
			done := make(chan error)
			go func() { // goroutine A
				if c.hold == "backward" {
					tape, loss := forward(w, g)
					done <- tape.Backward(loss)
					return
				}
				done <- opt.Step()
			}()
			<-g.entered
			err = c.other(w, opt) // goroutine B, while A is at the gate
			close(g.proceed)
			require.NoError(t, <-done, "A's own call completes")
			require.Error(t, err)
			for _, s := range c.want {
				require.ErrorContains(t, err, s)
			}
			if c.hold == "backward" { // B touched nothing: A's gradient alone
				require.Equal(t, []float64{1, 2, 3}, w.Grad.Float64s())
			} else {
				require.InDeltaSlice(t, []float64{0.9, 0.8, 0.7}, w.Value.Float64s(), 1e-12)
			}
			// Sequential use goes on working once neither is in flight.
			tape, loss := forward(w, nil)
			require.NoError(t, tape.Backward(loss))
			require.NoError(t, opt.Step())
		})
	}
}

// A Backward whose forward pass read a parameter before an optimizer step
// changed it is refused: its gradients would be of values that no longer
// exist (what a second goroutine's Step between this goroutine's forward
// pass and Backward does).
func TestBackwardAfterStepSinceForwardRefused(t *testing.T) {
	w := graph.NewParam("w", tensor.MustFromSlice([]float64{1, 1, 1}, 3))
	opt, err := optim.NewSGD([]*graph.Param{w}, optim.LR(0.1))
	require.NoError(t, err)
	stale, staleLoss := forward(w, nil)
	tape, loss := forward(w, nil)
	require.NoError(t, tape.Backward(loss))
	require.NoError(t, opt.Step())
	err = stale.Backward(staleLoss)
	require.ErrorContains(t, err, `parameter "w" was updated (by an optimizer step) after this tape's forward pass read it`)
	require.Equal(t, []float64{0, 0, 0}, w.Grad.Float64s(), "the refused Backward added nothing")
}
