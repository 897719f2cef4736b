package main

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	trainpkg "github.com/plumbml/plumb/train"
)

// childArgs holds the command line TestPlumbChild runs, fields separated
// by \x1f, when the test binary is re-executed as a plumb process.
const childArgs = "PLUMB_CMD_CHILD_ARGS"

// TestPlumbChild is not a test: it is the plumb process that
// TestTrainingSurvivesCtrlC starts and interrupts (the test binary
// re-executed, as go run would be too slow), run when childArgs is set.
func TestPlumbChild(t *testing.T) {
	a := os.Getenv(childArgs)
	if a == "" {
		t.Skip("the child process of TestTrainingSurvivesCtrlC")
	}
	os.Exit(exitStatus(run(strings.Split(a, "\x1f"), os.Stdout, os.Stderr), os.Stderr))
}

// Ctrl-C during plumb train, through the one driver, for mnist (with
// --state) and the recommender (without: the run keeps a state file of
// its own in the temporary directory): the child finishes its step, saves
// the state, ends its log with an end record and exits 130 naming the
// file; --resume then ends with the parameters and optimizer state of a
// run never interrupted.
func TestTrainingSurvivesCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three times a chapter")
	}
	for _, c := range []struct {
		chapter string
		args    func(t *testing.T) []string
		state   bool // pass --state
	}{
		{"mnist", func(*testing.T) []string {
			return []string{"--limit", "1200", "--batch", "4", "--seed", "3"}
		}, true},
		{"recommender", func(t *testing.T) []string {
			return []string{"--data", writeTinyMovieLens(t), "--batch", "2", "--epochs", "40", "--seed", "3"}
		}, false},
	} {
		t.Run(c.chapter, func(t *testing.T) {
			dir := t.TempDir()
			logDir := filepath.Join(dir, "run")
			common := append([]string{"train", c.chapter, "--log-every", "1"}, c.args(t)...)
			first := append(common, "--log", logDir, "--save", filepath.Join(dir, "never.safetensors"))
			state := filepath.Join(dir, "state.safetensors")
			if c.state {
				first = append(first, "--state", state)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestPlumbChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), childArgs+"="+strings.Join(first, "\x1f"), "TMPDIR="+dir)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			deadline := time.Now().Add(2 * time.Minute)
			for {
				b, _ := os.ReadFile(filepath.Join(logDir, runlog.FileName))
				if bytes.Count(b, []byte(`"kind":"step"`)) >= 5 {
					break
				}
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("no 5 steps logged in 2 minutes; stderr:\n%s", stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(os.Interrupt))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			require.Equal(t, trainpkg.ExitInterrupted, ee.ExitCode(), "stderr:\n%s", stderr.String())
			assert.Contains(t, stderr.String(), "finishing the step and saving")
			if !c.state {
				m := regexp.MustCompile(`--resume (\S+)\)`).FindStringSubmatch(stderr.String())
				require.NotNil(t, m, "the message names the state file; stderr:\n%s", stderr.String())
				state = m[1]
				assert.Equal(t, dir, filepath.Dir(state), "a run without --state keeps its own in the temporary directory")
			}
			assert.Contains(t, stderr.String(), "--resume "+state)
			assert.NoFileExists(t, filepath.Join(dir, "never.safetensors"), "an interrupted run is not the trained model --save promises")
			require.FileExists(t, state)
			log, err := runlog.Read(logDir)
			require.NoError(t, err)
			require.NotNil(t, log.End)
			assert.Equal(t, runlog.ReasonInterrupted, log.End.Reason)

			var out, errOut bytes.Buffer
			straight, resumed := filepath.Join(dir, "straight.safetensors"), filepath.Join(dir, "resumed.safetensors")
			require.NoError(t, run(append(common, "--save", straight), &out, &errOut), errOut.String())
			require.NoError(t, run(append(common, "--state", state, "--resume", state, "--log", logDir, "--save", resumed), &out, &errOut), errOut.String())
			want, _, err := checkpoint.Read(straight)
			require.NoError(t, err)
			got, _, err := checkpoint.Read(resumed)
			require.NoError(t, err)
			require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)))
			for name, w := range want {
				assert.Equal(t, w.DType(), got[name].DType(), name)
				assert.Equal(t, atValues(w), atValues(got[name]), "%s, resumed after step %d", name, log.End.Step)
			}
			log, err = runlog.Read(logDir)
			require.NoError(t, err)
			require.NotNil(t, log.End)
			assert.Equal(t, runlog.ReasonFinished, log.End.Reason)
		})
	}
}

// atValues is x's elements as float64s, whatever its dtype.
func atValues(x *tensor.Tensor) []float64 {
	v := make([]float64, x.Size())
	for i := range v {
		v[i] = x.At(i)
	}
	return v
}
