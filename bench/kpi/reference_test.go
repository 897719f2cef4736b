package kpi

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/bench"
	"github.com/plumbml/plumb/runlog"
)

// A speed KPI relative to the reference benchmark scales with the machine:
// on a machine at half the reference's speed the same run passes that
// fails an absolute floor, and a run slow relative to the machine fails.
func TestCheckReference(t *testing.T) {
	ks := []KPI{
		{Model: "mnist-cnn", Metric: "accuracy", Baseline: 0.98, Tolerance: 0.003, HigherIsBetter: true},
		{Model: "mnist-cnn", Metric: "samples_per_sec", Baseline: 5000, Tolerance: 0.5, Relative: true, HigherIsBetter: true, Reference: 20},
	}
	for _, tc := range []struct {
		name      string
		rate, ref float64
		pass      bool
		baseline  float64
	}{
		{"idle machine, healthy build", 4000, 20, true, 5000},
		{"busy machine (half speed), healthy build", 2000, 10, true, 2500},
		{"busy machine, the same run fails an absolute floor", 2000, 20, false, 5000},
		{"busy machine, slow build", 1000, 10, false, 2500},
		{"faster machine expects more", 4000, 40, false, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := CheckReference(ks, []*runlog.Run{run("plumb", "mnist-cnn", 0.98, tc.rate)}, tc.ref)
			require.NoError(t, err)
			require.Len(t, res, 2)
			assert.True(t, res[0].Pass)
			assert.Equal(t, 1.0, res[0].Scale)
			assert.Equal(t, tc.pass, res[1].Pass)
			assert.InDelta(t, tc.baseline, res[1].Baseline, 1e-9)
			assert.InDelta(t, tc.ref/20, res[1].Scale, 1e-12)
			var out bytes.Buffer
			_ = Report(&out, res)
			assert.Contains(t, out.String(), "5000 × ")
			assert.Contains(t, out.String(), "measured beside the reference benchmark")
		})
	}
	_, err := Check(ks, []*runlog.Run{run("plumb", "mnist-cnn", 0.98, 4000)})
	assert.ErrorContains(t, err, "relative to the reference benchmark")
	_, err = Parse(strings.NewReader(`[{"model": "m", "metric": "x", "reference": -1}]`), "k.json")
	assert.ErrorContains(t, err, "reference -1")
}

// The reference benchmark measures a positive speed, and runs at least
// three products however short the time asked.
func TestMeasureReference(t *testing.T) {
	g, err := MeasureReference(time.Millisecond)
	require.NoError(t, err)
	assert.Positive(t, g)
	assert.Less(t, g, 1e5, "GFLOP/s of a CPU")
}

// The embedded KPI file is the one in the tree, it parses, and every
// speed KPI that CI checks is relative to the reference benchmark.
func TestEmbeddedKPIFile(t *testing.T) {
	fromDisk, err := Load("../kpi.json")
	require.NoError(t, err)
	embedded, err := Parse(bytes.NewReader(bench.KPIFile), bench.KPIFileName)
	require.NoError(t, err)
	assert.Equal(t, fromDisk, embedded)
	ci := 0
	for _, k := range embedded {
		if k.Model == "mnist-cnn-limit4000" && k.Metric == runlog.SamplesPerSec {
			ci++
			assert.Positive(t, k.Reference, "CI's speed floor is relative to the reference benchmark")
		}
	}
	assert.Equal(t, 1, ci)
}
