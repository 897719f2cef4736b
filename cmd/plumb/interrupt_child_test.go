package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	trainpkg "github.com/plumbml/plumb/train"
)

// childArgs holds the command line TestPlumbChild runs, fields separated
// by \x1f, when the test binary is re-executed as a plumb process.
const childArgs = "PLUMB_CMD_CHILD_ARGS"

// TestPlumbChild is not a test: it is the plumb process that
// TestTrainMNISTSurvivesCtrlC starts and interrupts (the test binary
// re-executed, as go run would be too slow), run when childArgs is set.
func TestPlumbChild(t *testing.T) {
	a := os.Getenv(childArgs)
	if a == "" {
		t.Skip("the child process of TestTrainMNISTSurvivesCtrlC")
	}
	os.Exit(exitStatus(run(strings.Split(a, "\x1f"), os.Stdout, os.Stderr), os.Stderr))
}

// Ctrl-C during plumb train mnist: the child finishes its step, saves
// --state, ends its log with an end record and exits 130 naming the file;
// --resume then ends with the parameters of a run never interrupted.
func TestTrainMNISTSurvivesCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three times")
	}
	dir := t.TempDir()
	state, logDir := filepath.Join(dir, "state.safetensors"), filepath.Join(dir, "run")
	common := []string{"train", "mnist", "--limit", "1200", "--batch", "4", "--seed", "3", "--log-every", "1"}

	cmd := exec.Command(os.Args[0], "-test.run=^TestPlumbChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childArgs+"="+strings.Join(append(common, "--state", state, "--log", logDir,
		"--save", filepath.Join(dir, "never.safetensors")), "\x1f"))
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
	assert.Contains(t, stderr.String(), "--resume "+state)
	assert.NoFileExists(t, filepath.Join(dir, "never.safetensors"), "an interrupted run is not the trained model --save promises")
	require.FileExists(t, state)
	log, err := runlog.Read(logDir)
	require.NoError(t, err)
	require.NotNil(t, log.End)
	assert.Equal(t, runlog.ReasonInterrupted, log.End.Reason)
	assert.Less(t, log.End.Step, int64(300), "the signal should land mid-epoch")

	var out, errOut bytes.Buffer
	straight, resumed := filepath.Join(dir, "straight.safetensors"), filepath.Join(dir, "resumed.safetensors")
	require.NoError(t, run(append(common, "--save", straight), &out, &errOut), errOut.String())
	require.NoError(t, run(append(common, "--state", state, "--resume", state, "--log", logDir, "--save", resumed), &out, &errOut), errOut.String())
	a, err := mnist.New("cnn", tensor.NewRNG(0))
	require.NoError(t, err)
	b, err := mnist.New("cnn", tensor.NewRNG(0))
	require.NoError(t, err)
	require.NoError(t, checkpoint.Load(straight, a.Params(), nil))
	require.NoError(t, checkpoint.Load(resumed, b.Params(), nil))
	for i, p := range a.Params() {
		assert.Equal(t, p.Value.Float32s(), b.Params()[i].Value.Float32s(), "%s, resumed after step %d", p.Name, log.End.Step)
	}
	log, err = runlog.Read(logDir)
	require.NoError(t, err)
	require.NotNil(t, log.End)
	assert.Equal(t, runlog.ReasonFinished, log.End.Reason)
}
