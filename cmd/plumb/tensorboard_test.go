package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/runlog/tensorboard"
	"github.com/plumbml/plumb/runlog/tensorboard/tblog"
)

// --log writes TensorBoard's event file beside the run log, holding the
// same values at the same steps: every scalar that tblog maps from the
// log's step and epoch records, as float32, TensorBoard's scalar type.
func TestLogWritesTensorBoardEvents(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "mlp")
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"train", "mnist", "--model", "mlp", "--limit", "640", "--log", runDir, "--log-every", "2"}, &out, &errOut), errOut.String())
	assert.NotContains(t, errOut.String(), "warning:")

	events, err := filepath.Glob(filepath.Join(runDir, "events.out.tfevents.*"))
	require.NoError(t, err)
	require.Len(t, events, 1)
	got, err := tensorboard.Read(events[0])
	require.NoError(t, err)

	logged, err := runlog.Read(runDir)
	require.NoError(t, err)
	require.NotEmpty(t, logged.Steps)
	require.NotEmpty(t, logged.Epochs)
	want := map[string][]tensorboard.Scalar{}
	for _, r := range append(append([]runlog.Record{}, logged.Steps...), logged.Epochs...) {
		for tag, v := range tblog.Scalars(r) {
			want[tag] = append(want[tag], tensorboard.Scalar{Step: r.Step, Value: float32(v)})
		}
	}
	require.Contains(t, want, "loss")
	require.Contains(t, want, "epoch_accuracy")
	require.Equal(t, len(want), len(got), "tags")
	for tag, ws := range want {
		gs := got[tag]
		require.Len(t, gs, len(ws), tag)
		for i := range ws {
			assert.Equal(t, ws[i].Step, gs[i].Step, "%s step %d", tag, i)
			assert.Equal(t, ws[i].Value, gs[i].Value, "%s value %d", tag, i)
		}
	}
}
