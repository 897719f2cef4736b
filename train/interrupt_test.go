package train

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// childEnv switches the test binary, re-executed by the interrupt tests,
// into interruptChild: its value is the directory to work in.
const childEnv = "PLUMB_TRAIN_INTERRUPT_CHILD"

// interruptSource is the data of the interrupt tests: 50 steps an epoch.
var interruptSource = regression{n: 400, size: 8, seed: 5}

const interruptEpochs = 3

// TestInterruptChild is not a test: it is the child process of
// TestInterruptSavesAndResumes and TestSecondInterruptQuits, run when
// childEnv is set. It trains with NotifyInterrupt as a command does,
// printing "step N" after every step (and, with PLUMB_TRAIN_HANG, hanging
// after the first), and exits with ExitInterrupted when interrupted.
func TestInterruptChild(t *testing.T) {
	dir := os.Getenv(childEnv)
	if dir == "" {
		t.Skip("the child process of the interrupt tests")
	}
	s := newSetup(t, nil)
	cfg := s.config(interruptSource, interruptEpochs)
	cfg.StatePath = filepath.Join(dir, "state.safetensors")
	w, err := runlog.Start(filepath.Join(dir, "log"), runlog.Record{Framework: "plumb", Model: "regression", Unit: "pairs"})
	require.NoError(t, err)
	interrupt, stop := NotifyInterrupt(os.Stderr)
	defer stop()
	cfg.Interrupt = interrupt
	hang := os.Getenv("PLUMB_TRAIN_HANG") != ""
	cfg.Hooks = []Hooks{LogTo(w, 5, nil), {Step: func(st Step) error {
		fmt.Printf("step %d\n", st.GlobalStep)
		if hang {
			time.Sleep(time.Hour)
		}
		time.Sleep(20 * time.Millisecond) // time for the signal to land mid-run
		return nil
	}}}
	_, err = Run(cfg)
	require.NoError(t, w.Close())
	if errors.Is(err, ErrInterrupted) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(ExitInterrupted)
	}
	require.NoError(t, err)
}

// lockedBuffer is a bytes.Buffer that a child's output is copied into
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startChild starts the test binary as interruptChild in dir and returns
// it, a channel of its stdout lines, and its stderr.
func startChild(t *testing.T, dir string, env ...string) (*exec.Cmd, <-chan string, *lockedBuffer) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptChild$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), childEnv+"="+dir), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines, stderr
}

// waitFor reads lines until want, failing after a minute.
func waitFor(t *testing.T, lines <-chan string, want string) {
	deadline := time.After(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the child ended before printing %q", want)
			if l == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %q from the child in a minute", want)
		}
	}
}

// exitCode waits for cmd and returns its exit status.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	err := cmd.Wait()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	return ee.ExitCode()
}

// Ctrl-C in the middle of a run: the child finishes its step, saves its
// state, closes its log with an end record and exits 130; resuming from
// the state ends with exactly the parameters of a run never interrupted
// (the data order and the dropout RNG's position are restored).
func TestInterruptSavesAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd, lines, stderr := startChild(t, dir)
	waitFor(t, lines, "step 20")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	for range lines { // drain, so the child never blocks on its stdout
	}
	require.Equal(t, ExitInterrupted, exitCode(t, cmd), "stderr:\n%s", stderr)
	assert.Contains(t, stderr.String(), "finishing the step and saving")
	assert.Contains(t, stderr.String(), "interrupted after step")
	assert.Contains(t, stderr.String(), "--resume "+filepath.Join(dir, "state.safetensors"))

	state := filepath.Join(dir, "state.safetensors")
	require.FileExists(t, state)
	logDir := filepath.Join(dir, "log")
	run, err := runlog.Read(logDir)
	require.NoError(t, err)
	require.NotNil(t, run.End, "the log has no end record")
	assert.Equal(t, runlog.ReasonInterrupted, run.End.Reason)
	stopped := run.End.Step
	assert.GreaterOrEqual(t, stopped, int64(20))
	assert.Less(t, stopped, int64(50*interruptEpochs), "the signal should land mid-run")
	require.NotEmpty(t, run.Steps)
	assert.Equal(t, stopped, run.Steps[len(run.Steps)-1].Step, "the last step is logged before the end record")
	assert.Equal(t, "pairs", run.Unit())

	straight := newSetup(t, nil)
	_, err = Run(straight.config(interruptSource, interruptEpochs))
	require.NoError(t, err)

	resumed := newSetup(t, nil)
	cfg := resumed.config(interruptSource, interruptEpochs)
	cfg.ResumeFrom, cfg.StatePath = state, state
	w, err := runlog.Append(logDir, runlog.Record{Framework: "plumb", Model: "regression"})
	require.NoError(t, err)
	cfg.Hooks = []Hooks{LogTo(w, 5, nil)}
	_, err = Run(cfg)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	assert.Equal(t, straight.weights(), resumed.weights(), "resumed after step %d", stopped)

	run, err = runlog.Read(logDir)
	require.NoError(t, err)
	require.NotNil(t, run.End)
	assert.Equal(t, runlog.ReasonFinished, run.End.Reason)
	assert.Len(t, run.Epochs, interruptEpochs)
	assert.Len(t, run.Resumes, 1)
}

// A second Ctrl-C quits at once, without waiting for the step (here one
// that never ends) and without saving.
func TestSecondInterruptQuits(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd, lines, stderr := startChild(t, dir, "PLUMB_TRAIN_HANG=1")
	waitFor(t, lines, "step 1")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stderr.String(), "finishing the step") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	done := make(chan int)
	go func() { done <- exitCode(t, cmd) }()
	select {
	case code := <-done:
		assert.Equal(t, ExitInterrupted, code)
	case <-time.After(time.Minute):
		require.NoError(t, cmd.Process.Kill())
		t.Fatal("the second interrupt did not end the child")
	}
	assert.Contains(t, stderr.String(), "again: quitting without saving")
	assert.NoFileExists(t, filepath.Join(dir, "state.safetensors"))
}

// Interrupted within a process: mid-epoch, the state is saved after the
// step and the error says where; between epochs, after the epoch.
func TestInterruptInProcess(t *testing.T) {
	for _, tc := range []struct {
		name     string
		at       int64 // close the channel after this global step (0: after epoch 1)
		wantStep int
		wantMsg  string
	}{
		{"mid-epoch", 12, 12, "interrupted after step 12 of epoch 1"},
		{"between epochs", 0, 0, "interrupted after epoch 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.safetensors")
			s := newSetup(t, nil)
			cfg := s.config(interruptSource, interruptEpochs)
			cfg.StatePath = state
			ch := make(chan struct{})
			cfg.Interrupt = ch
			var ends []End
			cfg.Hooks = []Hooks{{
				Step: func(st Step) error {
					if st.GlobalStep == tc.at {
						close(ch)
					}
					return nil
				},
				Epoch: func(e Epoch) error {
					if tc.at == 0 && e.Epoch == 1 {
						close(ch)
					}
					return nil
				},
				End: func(e End) { ends = append(ends, e) },
			}}
			res, err := Run(cfg)
			require.ErrorIs(t, err, ErrInterrupted)
			var ie *InterruptedError
			require.ErrorAs(t, err, &ie)
			assert.Equal(t, tc.wantStep, ie.Step)
			assert.Equal(t, 1, ie.Epoch)
			assert.Equal(t, state, ie.StatePath)
			assert.Contains(t, err.Error(), tc.wantMsg)
			assert.Equal(t, "interrupted", res.Stopped)
			require.Len(t, ends, 1)
			assert.Equal(t, runlog.ReasonInterrupted, ends[0].Reason)

			resumesExactly(t, state)
		})
	}
}

// Without a StatePath the interrupted run says that nothing was saved.
func TestInterruptWithoutStatePath(t *testing.T) {
	s := newSetup(t, nil)
	cfg := s.config(interruptSource, 1)
	ch := make(chan struct{})
	close(ch)
	cfg.Interrupt = ch
	_, err := Run(cfg)
	require.ErrorIs(t, err, ErrInterrupted)
	assert.Contains(t, err.Error(), "nothing was saved")
}

// InterruptHooks interrupts a run through its hooks, as Config.Interrupt
// does: the state after the step is saved and resuming from it reaches
// the uninterrupted run's parameters.
func TestInterruptHooks(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.safetensors")
	s := newSetup(t, nil)
	cfg := s.config(interruptSource, interruptEpochs)
	cfg.StatePath = state
	ch := make(chan struct{})
	cfg.Hooks = []Hooks{{Step: func(st Step) error {
		if st.GlobalStep == 70 {
			close(ch)
		}
		return nil
	}}, InterruptHooks(ch)}
	_, err := Run(cfg)
	var ie *InterruptedError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, InterruptedError{Epoch: 2, Step: 20, GlobalStep: 70, StatePath: state}, *ie)

	resumesExactly(t, state)
}

// resumesExactly checks that a run resumed from state ends with the
// weights of a run never interrupted, bit for bit.
func resumesExactly(t *testing.T, state string) {
	t.Helper()
	straight := newSetup(t, nil)
	_, err := Run(straight.config(interruptSource, interruptEpochs))
	require.NoError(t, err)
	resumed := newSetup(t, nil)
	cfg := resumed.config(interruptSource, interruptEpochs)
	cfg.ResumeFrom = state
	_, err = Run(cfg)
	require.NoError(t, err)
	assert.Equal(t, straight.weights(), resumed.weights())
}
