package tblog

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/runlog/tensorboard"
)

func TestScalars(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  runlog.Record
		want map[string]float64
	}{
		{"run", runlog.Record{Kind: runlog.KindRun, Loss: 1}, map[string]float64{}},
		{"step", runlog.Record{Kind: runlog.KindStep, Step: 50, Loss: 0.9, LR: 1e-3, SamplesPerSec: 5000, RSS: 1 << 20, PeakRSS: 2 << 20},
			map[string]float64{"loss": 0.9, "lr": 1e-3, "samples_per_sec": 5000, "rss_bytes": 1 << 20, "peak_rss_bytes": 2 << 20}},
		{"step without lr", runlog.Record{Kind: runlog.KindStep, Loss: 0.9}, map[string]float64{"loss": 0.9}},
		{"epoch", runlog.Record{Kind: runlog.KindEpoch, Loss: 0.5, SamplesPerSec: 10, Metrics: map[string]float64{"accuracy": 0.95, "bleu": 0}},
			map[string]float64{"epoch_loss": 0.5, "epoch_samples_per_sec": 10, "epoch_accuracy": 0.95, "epoch_bleu": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Scalars(tc.rec))
		})
	}
}

func TestConvert(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	w, err := runlog.Create(dir, runlog.Record{Framework: "plumb", Model: "m"})
	require.NoError(t, err)
	require.NoError(t, w.Write(runlog.Record{Kind: runlog.KindStep, Epoch: 1, Step: 50, Loss: 0.9, LR: 1e-3, SamplesPerSec: 5000}))
	require.NoError(t, w.Write(runlog.Record{Kind: runlog.KindStep, Epoch: 1, Step: 100, Loss: 0.5, LR: 1e-3, SamplesPerSec: 5100}))
	require.NoError(t, w.Write(runlog.Record{Kind: runlog.KindEpoch, Epoch: 1, Step: 100, Loss: 0.5, SamplesPerSec: 5050,
		Metrics: map[string]float64{"accuracy": 0.95}}))
	require.NoError(t, w.Close())

	path, err := Convert(dir)
	require.NoError(t, err)
	run, err := runlog.Read(dir)
	require.NoError(t, err)
	got, err := tensorboard.Read(path)
	require.NoError(t, err)

	want := map[string][]tensorboard.Scalar{}
	for _, r := range append(run.Steps, run.Epochs...) {
		for tag, v := range Scalars(r) {
			want[tag] = append(want[tag], tensorboard.Scalar{Step: r.Step, Value: float32(v)})
		}
	}
	require.Len(t, got, len(want))
	for tag, ws := range want {
		require.Len(t, got[tag], len(ws), tag)
		for i, w := range ws {
			assert.Equal(t, w.Step, got[tag][i].Step, tag)
			assert.Equal(t, w.Value, got[tag][i].Value, tag)
		}
	}
	assert.Contains(t, got, "rss_bytes")
	fi, err := os.Stat(filepath.Join(dir, runlog.FileName))
	require.NoError(t, err)
	assert.WithinDuration(t, fi.ModTime(), got["epoch_accuracy"][0].Wall, time.Millisecond, "the last record is at the log's time")

	_, err = Convert(dir)
	assert.ErrorContains(t, err, "already holds the event file")
}

// TestExportRunForCheck writes a run directory, PLUMB_TB_EXPORT_RUN, with
// a run log (steps, epochs, a resume) and its event file (Convert), for
// `bench/tensorboard_check.py --runlog`; without the variable it is
// skipped.
func TestExportRunForCheck(t *testing.T) {
	dir := os.Getenv("PLUMB_TB_EXPORT_RUN")
	if dir == "" {
		t.Skip("PLUMB_TB_EXPORT_RUN not set")
	}
	w, err := runlog.Create(dir, runlog.Record{Framework: "plumb", Model: "check"})
	require.NoError(t, err)
	write := func(w *runlog.Writer, epochs ...int) {
		for _, e := range epochs {
			for s := 1; s <= 4; s++ {
				step := int64((e-1)*4 + s)
				require.NoError(t, w.Write(runlog.Record{Kind: runlog.KindStep, Epoch: e, Step: step, Examples: 32 * step,
					Loss: 2 / float64(step), LR: 0.1 / float64(e), SamplesPerSec: 1000 + float64(step)}))
			}
			require.NoError(t, w.Write(runlog.Record{Kind: runlog.KindEpoch, Epoch: e, Step: int64(e * 4), Examples: int64(128 * e),
				Loss: 1 / float64(e), SamplesPerSec: 1000, Metrics: map[string]float64{"accuracy": 0.5 + 0.1*float64(e), "loss": 0.9 / float64(e)}}))
		}
	}
	write(w, 1, 2)
	require.NoError(t, w.Close())
	// Resume after epoch 1: epoch 2's records are undone and logged again.
	w, err = runlog.Append(dir, runlog.Record{Framework: "plumb", Model: "check"})
	require.NoError(t, err)
	_, err = w.Resume(2, 4)
	require.NoError(t, err)
	write(w, 2, 3)
	require.NoError(t, w.Close())
	_, err = Convert(dir)
	require.NoError(t, err)
}
