package train

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEpochLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    Epoch
		unit string
		want string
	}{
		{"no metrics", Epoch{Epoch: 1, TrainLoss: 0.5, SamplesPerSec: 1000, Duration: 3 * time.Second}, "",
			"epoch 1/4: train loss 0.5000 (1000 samples/s, 3s)"},
		{"every metric, sorted", Epoch{Epoch: 2, TrainLoss: 0.25, Metrics: Metrics{"mse": 3.5, "bleu": 31.2, "f1": 0.75},
			SamplesPerSec: 812.4, Duration: 10 * time.Second, EvalDuration: 2 * time.Second, Best: true}, "target words",
			"epoch 2/4: train loss 0.2500, bleu 31.2, f1 0.75, mse 3.5 (812 target words/s, 10s + eval 2s) best"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, EpochLine(tc.e, 4, tc.unit))
		})
	}
}

// Config.Report prints the bar in the run's unit and one line per epoch
// with every metric, and nothing without it.
func TestReport(t *testing.T) {
	s := newSetup(t, nil)
	cfg := s.config(regression{n: 64, size: 16, seed: 2}, 2)
	cfg.Evaluate = func(func(int, int)) (Metrics, error) { return Metrics{"rmse": 0.5, "r2": 0.9}, nil }
	cfg.Unit = "pairs"
	var out bytes.Buffer
	cfg.Report = &out
	_, err := Run(cfg)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var epochs []string
	for _, l := range lines {
		if strings.HasPrefix(l, "epoch 1/2:") || strings.HasPrefix(l, "epoch 2/2:") {
			epochs = append(epochs, l)
		}
	}
	require.Len(t, epochs, 2, out.String())
	assert.Contains(t, epochs[0], "r2 0.9, rmse 0.5 (")
	assert.Contains(t, epochs[1], " pairs/s")
	assert.Contains(t, out.String(), "] 64/64  ", "the bar")
	assert.NotContains(t, out.String(), "samples/s")
}
