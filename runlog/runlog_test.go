package runlog

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteAndRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run1")
	w, err := Create(dir, Record{Framework: "plumb", Model: "mnist-cnn", Config: map[string]any{"batch": 64}})
	require.NoError(t, err)
	require.NoError(t, w.Write(Record{Kind: KindStep, Epoch: 1, Step: 50, Examples: 3200, Loss: 0.9, LR: 1e-3, SamplesPerSec: 5000}))
	require.NoError(t, w.Write(Record{Kind: KindStep, Epoch: 1, Step: 100, Examples: 6400, Loss: 0.5, LR: 1e-3, SamplesPerSec: 5100}))
	require.NoError(t, w.Write(Record{Kind: KindEpoch, Epoch: 1, Step: 100, Examples: 6400, Loss: 0.5, SamplesPerSec: 5050,
		Metrics: map[string]float64{"accuracy": 0.95, "loss": 0.2}}))
	require.NoError(t, w.Close())

	run, err := Read(dir)
	require.NoError(t, err)
	assert.Equal(t, "run1", run.Name)
	assert.Equal(t, "plumb mnist-cnn (run1)", run.Label())
	assert.Equal(t, float64(64), run.Meta.Config["batch"])
	require.Len(t, run.Steps, 2)
	require.Len(t, run.Epochs, 1)
	assert.Equal(t, 0.5, run.Steps[1].Loss)
	assert.Equal(t, 0.95, run.Epochs[0].Metrics["accuracy"])
	assert.Positive(t, run.Steps[0].Wall)
	if runtime.GOOS == "linux" {
		assert.Positive(t, run.Steps[0].RSS)
		assert.GreaterOrEqual(t, run.Steps[0].PeakRSS, run.Steps[0].RSS)
	}

	s := Summarize(run)
	assert.Equal(t, 0.95, s.Values["accuracy"])
	assert.Equal(t, 5050.0, s.Values[SamplesPerSec])
	assert.Equal(t, 0.5, s.Values[TrainLoss])
	table := Table([]*Run{run, {Meta: Record{Kind: KindRun, Framework: "pytorch", Model: "mnist-cnn"}}})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, "| run | epochs | accuracy (%) | loss | rate | peak RSS (MiB) | train loss | wall (s) | ended |", lines[0])
	assert.True(t, strings.HasPrefix(lines[2], "| plumb mnist-cnn (run1) | 1 | 95.00 | 0.2 | 5050 samples/s | "), lines[2])
	assert.Equal(t, "| pytorch mnist-cnn | 0 | – | – | – | – | – | – | – |", lines[3])
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, log, want string }{
		{"empty", "", "empty run log"},
		{"no run record", `{"kind":"step"}`, `line 1: kind "step"`},
		{"bad json", "{\"kind\":\"run\"}\n{\n", "line 2 (offset 15)"},
		{"bad json mid-file", "{\"kind\":\"run\"}\n{\n{\"kind\":\"step\"}\n", "line 2 (offset 15)"},
		{"only a torn line", "{\"kind\":\"ru", "no whole record: line 1 (offset 0): skipped a torn last line"},
		{"unknown kind", "{\"kind\":\"run\"}\n{\"kind\":\"batch\"}", `line 2: record of kind "batch"`},
		{"second run record", "{\"kind\":\"run\"}\n{\"kind\":\"run\"}", `line 2: record of kind "run"`},
	}
	for _, tc := range tests {
		_, err := Parse(strings.NewReader(tc.log))
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	_, err := Read(filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
}

// Start begins a log like Create, over a missing or empty log, and
// refuses one that holds records, keeping it.
func TestStartRefusesExistingLog(t *testing.T) {
	dir := t.TempDir()
	w, err := Start(dir, Record{Framework: "plumb", Model: "m"})
	require.NoError(t, err)
	require.NoError(t, w.Write(Record{Kind: KindEpoch, Epoch: 1, Step: 1}))
	require.NoError(t, w.Close())
	path := filepath.Join(dir, FileName)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Start(dir, Record{Framework: "plumb", Model: "m"})
	require.ErrorIs(t, err, ErrExists)
	assert.ErrorContains(t, err, path)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)

	require.NoError(t, os.WriteFile(path, nil, 0o644))
	w, err = Start(dir, Record{Framework: "plumb", Model: "m"})
	require.NoError(t, err)
	require.NoError(t, w.Close())
}

// An end record says how the run ended; a resume after it means the run
// went on, so the log has no end until the resumed run writes its own.
func TestEndRecord(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		want      *Record
	}{
		{"none", `{"kind":"run","framework":"plumb"}
{"kind":"step","epoch":1,"step":5}
`, nil},
		{"interrupted", `{"kind":"run","framework":"plumb","unit":"images"}
{"kind":"step","epoch":1,"step":5}
{"kind":"end","epoch":1,"step":5,"examples":40,"reason":"interrupted","wall_s":2}
`, &Record{Kind: KindEnd, Epoch: 1, Step: 5, Examples: 40, Reason: ReasonInterrupted, Wall: 2}},
		{"resumed after it", `{"kind":"run","framework":"plumb"}
{"kind":"end","epoch":1,"step":5,"reason":"interrupted"}
{"kind":"resume","epoch":1,"step":5}
{"kind":"step","epoch":1,"step":10}
`, nil},
		{"resumed and finished", `{"kind":"run","framework":"plumb"}
{"kind":"end","epoch":1,"step":5,"reason":"interrupted"}
{"kind":"resume","epoch":1,"step":5}
{"kind":"end","epoch":2,"step":20,"reason":"finished"}
`, &Record{Kind: KindEnd, Epoch: 2, Step: 20, Reason: ReasonFinished}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := Parse(strings.NewReader(tc.log))
			require.NoError(t, err)
			assert.Equal(t, tc.want, run.End)
		})
	}
	run, err := Parse(strings.NewReader(`{"kind":"run","unit":"images"}`))
	require.NoError(t, err)
	assert.Equal(t, "images", run.Unit())
	assert.Equal(t, DefaultUnit, (&Run{}).Unit())
}

// Each run's own metrics make the table: BLEU, F1, MSE and cost runs
// show their values (the table once showed only test accuracy, and "–"
// for these), in the console's units, with each run's rate in its unit.
func TestTableShowsEachRunsMetrics(t *testing.T) {
	epoch := func(m map[string]float64) []Record {
		return []Record{{Kind: KindEpoch, Epoch: 1, Loss: 1.5, SamplesPerSec: 1000, Metrics: m}}
	}
	runs := []*Run{
		{Meta: Record{Kind: KindRun, Framework: "plumb", Model: "translate", Unit: "target words"}, Epochs: epoch(map[string]float64{"bleu": 31.23, "val_loss": 2.5}),
			End: &Record{Kind: KindEnd, Reason: ReasonInterrupted}},
		{Meta: Record{Kind: KindRun, Framework: "plumb", Model: "srl", Unit: "sequences"}, Epochs: epoch(map[string]float64{"f1": 0.61, "loss": 51.14})},
		{Meta: Record{Kind: KindRun, Framework: "plumb", Model: "recommender"}, Epochs: epoch(map[string]float64{"mse": 3.598})},
		{Meta: Record{Kind: KindRun, Framework: "plumb", Model: "word2vec"}, Epochs: epoch(map[string]float64{"test_cost": 5.1163})},
		{Meta: Record{Kind: KindRun, Framework: "keras", Model: "mnist-cnn", Unit: "images"}, Epochs: epoch(map[string]float64{"accuracy": 0.9829})},
	}
	lines := strings.Split(strings.TrimSpace(Table(runs)), "\n")
	require.Len(t, lines, 7)
	assert.Equal(t, "| run | epochs | accuracy (%) | bleu (points) | f1 | loss | mse | test_cost | val_loss | rate | peak RSS (MiB) | train loss | wall (s) | ended |", lines[0])
	assert.Equal(t, "| plumb translate | 1 | – | 31.23 | – | – | – | – | 2.5 | 1000 target words/s | – | 1.5000 | – | interrupted |", lines[2])
	assert.Equal(t, "| plumb srl | 1 | – | – | 0.61 | 51.14 | – | – | – | 1000 sequences/s | – | 1.5000 | – | – |", lines[3])
	assert.Equal(t, "| plumb recommender | 1 | – | – | – | – | 3.598 | – | – | 1000 samples/s | – | 1.5000 | – | – |", lines[4])
	assert.Equal(t, "| plumb word2vec | 1 | – | – | – | – | – | 5.116 | – | 1000 samples/s | – | 1.5000 | – | – |", lines[5])
	assert.Equal(t, "| keras mnist-cnn | 1 | 98.29 | – | – | – | – | – | – | 1000 images/s | – | 1.5000 | – | – |", lines[6])
}
