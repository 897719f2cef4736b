package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// train mnist --log writes a run log that plot, compare and kpi read.
func TestRunLogPlotCompareKPI(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "mlp")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "1000", "--log", runDir, "--log-every", "5"}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "run log in "+runDir)
	r, err := runlog.Read(runDir)
	require.NoError(t, err)
	assert.Equal(t, "plumb", r.Meta.Framework)
	assert.Equal(t, "mnist-mlp-limit1000", r.Meta.Model)
	require.Len(t, r.Steps, 16) // 16 steps of 64 of 1000 images, each past another twentieth of the epoch (train.PointsPerEpoch)
	assert.Equal(t, int64(1000), r.Steps[15].Examples)
	require.Len(t, r.Epochs, 1)
	assert.Greater(t, r.Epochs[0].Metrics["accuracy"], 0.5)
	assert.Positive(t, r.Epochs[0].PeakRSS)

	out.Reset()
	require.NoError(t, run([]string{"plot", runDir}, &out, &errOut))
	f, err := os.Open(filepath.Join(runDir, "plot.png"))
	require.NoError(t, err)
	_, err = png.Decode(f)
	f.Close()
	require.NoError(t, err)

	out.Reset()
	other := filepath.Join(dir, "other.png")
	require.NoError(t, run([]string{"compare", runDir, "-o", other, runDir}, &out, &errOut))
	assert.Contains(t, out.String(), "| plumb mnist-mlp-limit1000 | 1 | ")
	assert.FileExists(t, other)

	kpis := filepath.Join(dir, "kpi.json")
	for _, tc := range []struct {
		baseline float64
		pass     bool
	}{{0.5, true}, {0.999, false}} {
		body := fmt.Appendf(nil, `[{"model": "mnist-mlp-limit1000", "metric": "accuracy", "baseline": %v, "tolerance": 0.01, "higher_is_better": true}]`, tc.baseline)
		require.NoError(t, os.WriteFile(kpis, body, 0o644))
		out.Reset()
		err := run([]string{"kpi", "--file", kpis, runDir}, &out, &errOut)
		assert.Contains(t, out.String(), "| run | epochs | accuracy (%) |")
		if tc.pass {
			assert.NoError(t, err)
			assert.Contains(t, out.String(), "KPI check: all 1 passed")
		} else {
			assert.ErrorContains(t, err, "kpi: FAILED")
			assert.Contains(t, out.String(), "KPI check: 1 of 1 FAILED")
		}
	}

	require.ErrorContains(t, run([]string{"plot"}, &out, &errOut), "name at least one run directory")
	require.ErrorContains(t, run([]string{"compare", filepath.Join(dir, "none")}, &out, &errOut), "no such file")
	require.ErrorContains(t, run([]string{"train", "mnist", "--log-every", "0"}, &out, &errOut), "--log-every 0")
}

// --state saves the run after each epoch; --resume continues it, here
// with the second of two epochs only.
//
// With the same --log, the resumed run appends to the log: it keeps the
// first epoch's records and adds a resume
// record naming the state file.
func TestStateAndResume(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.safetensors")
	logDir := filepath.Join(t.TempDir(), "run")
	var out, errOut bytes.Buffer
	args := []string{"train", "mnist", "--model", "mlp", "--limit", "640", "--state", state, "--log", logDir}
	require.NoError(t, run(args, &out, &errOut), errOut.String())
	require.FileExists(t, state)
	out.Reset()
	require.NoError(t, run(append(args, "--epochs", "2", "--resume", state), &out, &errOut), errOut.String())
	assert.NotContains(t, out.String(), "epoch 1/2")
	assert.Contains(t, out.String(), "epoch 2/2: train loss")
	log, err := runlog.Read(logDir)
	require.NoError(t, err)
	require.Len(t, log.Epochs, 2)
	assert.Equal(t, []int{1, 2}, []int{log.Epochs[0].Epoch, log.Epochs[1].Epoch})
	assert.Equal(t, 2*log.Epochs[0].Examples, log.Epochs[1].Examples)
	require.Len(t, log.Resumes, 1)
	assert.Equal(t, "mnist-mlp-limit640-epochs2", log.Meta.Model)
	b, err := os.ReadFile(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"resume":"`+state+`"`)
	err = run([]string{"train", "mnist", "--resume", state}, &out, &errOut) // a CNN cannot resume an MLP's state
	assert.ErrorContains(t, err, "train: resume")
}

// plot names the metrics it leaves out; plot, compare and kpi read a log
// whose last line a crash tore, with a warning, keeping the records
// before it.
func TestPlotBoundsAndTornLogs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	log := `{"kind":"run","framework":"plumb","model":"m"}` + "\n" +
		`{"kind":"step","epoch":1,"step":1,"examples":64,"loss":2.3,"wall_s":1}` + "\n" +
		`{"kind":"epoch","epoch":1,"step":1,"examples":64,"loss":2.3,"metrics":{`
	for i := range 20 {
		if i > 0 {
			log += ","
		}
		log += fmt.Sprintf(`"m%02d":0.5`, i)
	}
	log += "}}\n" + `{"kind":"epoch","epoch":2,"st`
	require.NoError(t, os.WriteFile(filepath.Join(dir, runlog.FileName), []byte(log), 0o644))
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"plot", dir, "--max-metrics", "18"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "left out 2 metrics past the first 18 by name (--max-metrics): m18, m19\n")
	assert.Contains(t, errOut.String(), "warning: "+filepath.Join(dir, runlog.FileName)+": line 4 (offset ")
	assert.Contains(t, errOut.String(), "skipped a torn last line")
	out.Reset()
	require.NoError(t, run([]string{"compare", dir}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "| plumb m (run) | 1 |")
	require.ErrorContains(t, run([]string{"plot", dir, "--max-metrics", "0"}, &out, &errOut), "--max-metrics 0, want at least 1")
}

// A --log that cannot be opened when the run starts (here its directory
// would lie under a regular file, as a read-only or full disk would also
// fail it) costs the log, not the run: one warning, and training and
// --save go on.
func TestLogUnopenableTrainsAndSaves(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, []byte("x"), 0o644))
	save := filepath.Join(dir, "model.safetensors")
	var out, errOut bytes.Buffer
	err := run([]string{"train", "mnist", "--model", "mlp", "--limit", "640", "--log", filepath.Join(blocker, "run"), "--save", save}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	assert.Equal(t, 1, strings.Count(errOut.String(), "warning:"), errOut.String())
	assert.Contains(t, errOut.String(), "training goes on without the run log")
	assert.Contains(t, out.String(), "epoch 1/1: train loss")
	assert.FileExists(t, save)
	assert.NotContains(t, out.String(), "run log in")
}

// A fresh run (no --resume) into a --log directory whose log holds an
// earlier run is refused before training, naming the log and what to do;
// the earlier run's records stay.
func TestLogFreshRunIntoExistingLogRefused(t *testing.T) {
	logDir := filepath.Join(t.TempDir(), "run")
	var out, errOut bytes.Buffer
	args := []string{"train", "mnist", "--model", "mlp", "--limit", "640", "--log", logDir}
	require.NoError(t, run(args, &out, &errOut), errOut.String())
	before, err := os.ReadFile(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	out.Reset()
	err = run(args, &out, &errOut)
	require.ErrorIs(t, err, runlog.ErrExists)
	assert.ErrorContains(t, err, filepath.Join(logDir, runlog.FileName))
	assert.ErrorContains(t, err, "resume that run")
	assert.NotContains(t, out.String(), "epoch 1/1")
	after, err := os.ReadFile(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	assert.Equal(t, before, after)
}
