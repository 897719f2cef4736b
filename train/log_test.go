package train

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// fullDisk fails every write after the first n as a full disk does.
type fullDisk struct{ n int }

func (d *fullDisk) Write(p []byte) (int, error) {
	if d.n > 0 {
		d.n--
		return len(p), nil
	}
	return 0, syscall.ENOSPC
}

// A log that cannot be written (a full disk) warns once and the run goes
// on: every epoch trains and the state file is written.
func TestLogWriteFailureLosesNoCheckpoint(t *testing.T) {
	s := newSetup(t, nil)
	cfg := s.config(regression{n: 100, size: 16, seed: 5}, 3) // 7 steps an epoch
	state := filepath.Join(t.TempDir(), "state.safetensors")
	cfg.StatePath = state
	var warn bytes.Buffer
	cfg.Hooks = []Hooks{LogTo(runlog.NewWriter(&fullDisk{n: 3}), 2, &warn)}
	res, err := Run(cfg)
	require.NoError(t, err)
	assert.Len(t, res.Epochs, 3)
	assert.Equal(t, 1, strings.Count(warn.String(), "warning:"), warn.String())
	assert.Contains(t, warn.String(), "no space left on device")
	assert.Contains(t, warn.String(), "training goes on without the run log")
	require.FileExists(t, state)
}

// A run resumed from its state file with the same log appends to it: a
// resume record, then the resumed epochs, and every earlier record stays.
func TestResumeAppendsToTheLog(t *testing.T) {
	src := regression{n: 100, size: 16, seed: 5} // 7 steps an epoch
	dir := t.TempDir()
	state := filepath.Join(dir, "state.safetensors")
	logDir := filepath.Join(dir, "log")
	meta := runlog.Record{Framework: "plumb", Model: "regression"}

	first := newSetup(t, nil)
	cfg := first.config(src, 2)
	cfg.StatePath = state
	w, err := runlog.Append(logDir, meta)
	require.NoError(t, err)
	cfg.Hooks = []Hooks{LogTo(w, 3, nil)}
	_, err = Run(cfg)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	before, err := os.ReadFile(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)

	second := newSetup(t, nil)
	cfg = second.config(src, 4)
	cfg.StatePath, cfg.ResumeFrom = state, state
	w, err = runlog.Append(logDir, meta)
	require.NoError(t, err)
	cfg.Hooks = []Hooks{LogTo(w, 3, nil)}
	_, err = Run(cfg)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	after, err := os.ReadFile(filepath.Join(logDir, runlog.FileName))
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(after, before), "the earlier records stay as they were")
	run, err := runlog.Read(logDir)
	require.NoError(t, err)
	require.Len(t, run.Epochs, 4)
	for i, e := range run.Epochs {
		assert.Equal(t, i+1, e.Epoch)
		assert.Equal(t, int64(7*(i+1)), e.Step)
		assert.Equal(t, int64(100*(i+1)), e.Examples, "epoch %d", i+1)
	}
	require.Len(t, run.Resumes, 1)
	assert.Equal(t, runlog.Record{Kind: runlog.KindResume, Model: "regression", Epoch: 3, Step: 14, Wall: run.Resumes[0].Wall}, run.Resumes[0])
}

// A short run's log has points enough for a curve: a step record at
// every twentieth of an epoch, whatever `every` says, and no step twice.
func TestLogPointsPerEpoch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, every  int
		perEpoch  [2]int
		wantSteps []int64 // of epoch 1, when short
	}{
		{"100 steps an epoch, every 1000", 1600, 1000, [2]int{PointsPerEpoch, PointsPerEpoch}, nil},
		{"7 steps an epoch, every 50", 100, 50, [2]int{7, 7}, []int64{1, 2, 3, 4, 5, 6, 7}},
		// the multiples of 3, and the twentieths (every 5th step of the epoch) not among them
		{"100 steps an epoch, every 3", 1600, 3, [2]int{33 + 20 - 6, 33 + 20 - 7}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, nil)
			cfg := s.config(regression{n: tc.n, size: 16, seed: 5}, 2)
			var buf bytes.Buffer
			w := runlog.NewWriter(&buf)
			require.NoError(t, w.Write(runlog.Record{Kind: runlog.KindRun, Framework: "plumb"}))
			cfg.Hooks = []Hooks{LogTo(w, tc.every, nil)}
			_, err := Run(cfg)
			require.NoError(t, err)
			run, err := runlog.Parse(&buf)
			require.NoError(t, err)
			per := map[int][]int64{}
			for _, r := range run.Steps {
				per[r.Epoch] = append(per[r.Epoch], r.Step)
			}
			for e := 1; e <= 2; e++ {
				assert.Len(t, per[e], tc.perEpoch[e-1], "epoch %d: %v", e, per[e])
				for i := 1; i < len(per[e]); i++ {
					assert.Less(t, per[e][i-1], per[e][i], "no step logged twice")
				}
			}
			if tc.wantSteps != nil {
				assert.Equal(t, tc.wantSteps, per[1])
			}
		})
	}
}
