package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// fakeRun writes a run log of model with one epoch at accuracy and rate.
func fakeRun(t *testing.T, dir, model string, accuracy, rate float64) {
	w, err := runlog.Create(dir, runlog.Record{Framework: "plumb", Model: model, Unit: "images"})
	require.NoError(t, err)
	require.NoError(t, w.Write(runlog.Record{Kind: runlog.KindEpoch, Epoch: 1, Step: 63, Examples: 4000, Loss: 0.5,
		SamplesPerSec: rate, Metrics: map[string]float64{"accuracy": accuracy, "loss": 0.4}}))
	require.NoError(t, w.Close())
}

// plumb kpi finds the KPI file wherever it runs (it is embedded; the
// command once read bench/kpi.json relative to the current directory),
// and its speed floor follows the reference benchmark: the same rate
// passes on a machine measured slow and fails on one measured fast.
func TestKPIEmbeddedAndRelative(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // no bench/kpi.json here
	runDir := filepath.Join(dir, "run")
	fakeRun(t, runDir, "mnist-cnn-limit4000", 0.8786, 300)
	for _, tc := range []struct {
		name string
		ref  string
		pass bool
	}{
		{"a slow (busy) machine", "1", true},
		{"a fast machine", "1000", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run([]string{"kpi", "--reference", tc.ref, runDir}, &out, &errOut)
			assert.Contains(t, out.String(), "| plumb mnist-cnn-limit4000 (run) | samples_per_sec | 300 |")
			assert.Contains(t, out.String(), "| plumb mnist-cnn-limit4000 (run) | 1 | 87.86 | 0.4 | 300 images/s |")
			if tc.pass {
				require.NoError(t, err, out.String())
				assert.Contains(t, out.String(), "KPI check: all 2 passed")
			} else {
				require.ErrorContains(t, err, "kpi: FAILED")
			}
		})
	}
	var out, errOut bytes.Buffer
	_ = run([]string{"kpi", "--reference-time", "20ms", runDir}, &out, &errOut)
	assert.Contains(t, out.String(), "reference benchmark: ")
	assert.Contains(t, out.String(), "GFLOP/s (float32 256³ matrix products for 20ms)")
	require.ErrorContains(t, run([]string{"kpi", "--reference", "-1", runDir}, &out, &errOut), "--reference -1")
}
