package runlog

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingMirror keeps what it is sent, and fails from its failAt-th
// record on (0: never).
type recordingMirror struct {
	got    []Record
	walls  []time.Time
	failAt int
	closed int
}

func (m *recordingMirror) Write(r Record, wall time.Time) error {
	if m.failAt > 0 && len(m.got)+1 >= m.failAt {
		return errors.New("mirror: disk full")
	}
	m.got, m.walls = append(m.got, r), append(m.walls, wall)
	return nil
}

func (m *recordingMirror) Close() error { m.closed++; return nil }

// The mirror gets each record as the log wrote it (wall time and RSS
// filled in); a failing mirror is reported once, closed and dropped, and
// the log takes every record all the same.
func TestMirror(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failAt   int
		mirrored int
		warnings int
	}{
		{"healthy", 0, 3, 0},
		{"fails at the second record", 2, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := Create(dir, Record{Framework: "plumb", Model: "m"})
			require.NoError(t, err)
			m := &recordingMirror{failAt: tc.failAt}
			var warn bytes.Buffer
			w.SetMirror(m, &warn)
			for step := int64(1); step <= 3; step++ {
				require.NoError(t, w.Write(Record{Kind: KindStep, Step: step, Loss: float64(step)}))
			}
			require.NoError(t, w.Close())
			assert.Equal(t, 1, m.closed)
			assert.Equal(t, tc.warnings, strings.Count(warn.String(), "warning:"), warn.String())

			run, err := Read(dir)
			require.NoError(t, err)
			require.Len(t, run.Steps, 3)
			require.Len(t, m.got, tc.mirrored)
			for i, r := range m.got {
				assert.Equal(t, run.Steps[i], r)
				assert.NotZero(t, r.Wall)
				assert.NotZero(t, r.RSS)
				assert.False(t, m.walls[i].IsZero())
			}
		})
	}
}
