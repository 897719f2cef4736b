package kpi

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

func run(framework, model string, acc, rate float64) *runlog.Run {
	return &runlog.Run{
		Meta:   runlog.Record{Kind: runlog.KindRun, Framework: framework, Model: model},
		Epochs: []runlog.Record{{Kind: runlog.KindEpoch, Epoch: 1, SamplesPerSec: rate, Metrics: map[string]float64{"accuracy": acc}}},
	}
}

func TestCheck(t *testing.T) {
	ks := []KPI{
		{Model: "mnist-cnn", Metric: "accuracy", Baseline: 0.98, Tolerance: 0.003, HigherIsBetter: true},
		{Model: "mnist-cnn", Metric: "samples_per_sec", Baseline: 5000, Tolerance: 0.8, Relative: true, HigherIsBetter: true},
		{Model: "mnist-cnn", Metric: "peak_rss_mib", Baseline: 300, Tolerance: 0.5, Relative: true},
	}
	tests := []struct {
		name      string
		acc, rate float64
		pass      []bool
	}{
		{"at the baselines", 0.98, 5000, []bool{true, true, false}}, // RSS not logged: fails
		{"better everywhere", 0.99, 9000, []bool{true, true, false}},
		{"within tolerance", 0.9771, 1001, []bool{true, true, false}},
		{"accuracy too low", 0.9769, 5000, []bool{false, true, false}},
		{"too slow", 0.98, 999, []bool{true, false, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := []*runlog.Run{run("plumb", "mnist-cnn", tc.acc, tc.rate), run("pytorch", "mnist-cnn", 0.5, 1)}
			res, err := Check(ks, rs)
			require.NoError(t, err)
			require.Len(t, res, 3, "only the plumb run is checked")
			for i, r := range res {
				assert.Equal(t, tc.pass[i], r.Pass, r.Metric)
			}
			var out bytes.Buffer
			assert.ErrorIs(t, Report(&out, res), ErrFailed)
			assert.Contains(t, out.String(), "| plumb mnist-cnn | peak_rss_mib | – | 300 | 450 | FAIL (not logged) |")
		})
	}
	res, err := Check(ks[:2], []*runlog.Run{run("plumb", "mnist-cnn", 0.985, 6000)})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Report(&out, res))
	assert.Contains(t, out.String(), "| plumb mnist-cnn | accuracy | 0.985 | 0.98 | 0.977 | ok (better) |")
	assert.Contains(t, out.String(), "KPI check: all 2 passed")

	_, err = Check(ks, []*runlog.Run{run("plumb", "mnist-mlp", 0.9, 1)})
	assert.ErrorContains(t, err, "no KPI applies to the runs given (plumb mnist-mlp)")
}

func TestLoad(t *testing.T) {
	ks, err := Load("../kpi.json")
	require.NoError(t, err)
	models := map[string]bool{}
	for _, k := range ks {
		models[k.Model] = true
	}
	assert.True(t, models["mnist-cnn"])
	assert.True(t, models["mnist-cnn-limit4000"], "the KPI CI checks")

	dir := t.TempDir()
	for name, body := range map[string]string{
		"no metric":      `[{"model": "m", "baseline": 1}]`,
		"unknown field":  `[{"model": "m", "metric": "accuracy", "tolerence": 1}]`,
		"relative zero":  `[{"model": "m", "metric": "x", "relative": true}]`,
		"not a list":     `{}`,
		"after the list": `[{"model": "m", "metric": "x"}] [`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		_, err := Load(p)
		assert.Error(t, err, name)
	}
}

// A KPI file is read within bounds: a file past MaxFileBytes is refused
// before it is read whole, and data after the list is an error.
func TestLoadBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, []byte("["+strings.Repeat(" ", MaxFileBytes)+"]"), 0o644))
	_, err := Load(big)
	assert.ErrorContains(t, err, "longer than 1048576 bytes (kpi.MaxFileBytes)")
	_, err = Parse(strings.NewReader(`[{"model": "m", "metric": "x"}] [`), "k.json")
	assert.ErrorContains(t, err, "kpi: k.json: offset 32: data after the list of KPIs")
	_, err = Parse(strings.NewReader(`[{"model": "m", "metric": "x"}, {"model": 1}]`), "k.json")
	assert.ErrorContains(t, err, "kpi: k.json: offset ")
}
