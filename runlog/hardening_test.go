package runlog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeLog writes a log of epochs epochs, two step records and one epoch
// record each, 10 steps of 100 examples an epoch, starting after epoch
// from (0: a fresh log with its run record).
func writeLog(t *testing.T, w *Writer, from, epochs int) {
	t.Helper()
	for e := from + 1; e <= from+epochs; e++ {
		for _, s := range []int64{5, 10} {
			step := int64(e-1)*10 + s
			require.NoError(t, w.Write(Record{Kind: KindStep, Epoch: e, Step: step, Examples: 100 * step, Loss: 1 / float64(step)}))
		}
		require.NoError(t, w.Write(Record{Kind: KindEpoch, Epoch: e, Step: int64(e) * 10, Examples: 1000 * int64(e),
			Metrics: map[string]float64{"accuracy": float64(e) / 10}}))
	}
}

// A torn last line (a crash mid-write, or a write cut short by a full
// disk) is skipped with a warning; every record before it is kept.
func TestTornLastLineKeepsEarlierRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, Record{Framework: "plumb", Model: "m"})
	require.NoError(t, err)
	writeLog(t, w, 0, 2)
	require.NoError(t, w.Close())
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"kind":"epoch","epoch":3,"st`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	run, err := Read(dir)
	require.NoError(t, err)
	assert.Len(t, run.Steps, 4)
	assert.Len(t, run.Epochs, 2)
	require.Len(t, run.Warnings, 1)
	assert.Contains(t, run.Warnings[0], path+": line 8 (offset ")
	assert.Contains(t, run.Warnings[0], "skipped a torn last line")

	// A whole last record without its newline is no torn line.
	run, err = Parse(strings.NewReader("{\"kind\":\"run\"}\n{\"kind\":\"epoch\",\"epoch\":1}"))
	require.NoError(t, err)
	assert.Len(t, run.Epochs, 1)
	assert.Empty(t, run.Warnings)
}

// A resumed run appends to its log, with a resume record, and keeps every
// earlier record; before, Create replaced the log (2 epochs became 1). The
// torn line a crash left is cut off first, and records of the earlier run
// past the resumed step drop out of the parsed run.
func TestAppendKeepsEarlierRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, Record{Framework: "plumb", Model: "m"})
	require.NoError(t, err)
	writeLog(t, w, 0, 2)
	// The crashed run had gone on into epoch 3 past its last state file.
	require.NoError(t, w.Write(Record{Kind: KindStep, Epoch: 3, Step: 25, Examples: 2500}))
	require.NoError(t, w.Close())
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"kind":"st`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, err = Append(dir, Record{Framework: "pytorch", Model: "m"})
	require.ErrorContains(t, err, "is the log of a plumb run; this run is pytorch's")

	w, err = Append(dir, Record{Framework: "plumb", Model: "m-epochs3", Config: map[string]any{"resume": "state.st"}})
	require.NoError(t, err)
	examples, err := w.Resume(3, 20) // the state file was written after epoch 2
	require.NoError(t, err)
	assert.Equal(t, int64(2000), examples)
	examples, err = w.Resume(3, 20) // once only
	require.NoError(t, err)
	assert.Zero(t, examples)
	writeLog(t, w, 2, 1)
	require.NoError(t, w.Close())

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 1+6+1+1+3, string(b)) // run, 2 epochs, the crashed step, resume, epoch 3
	assert.Contains(t, lines[8], `"kind":"resume","framework":"plumb","model":"m-epochs3","config":{"resume":"state.st"},"epoch":3,"step":20`)

	run, err := Read(dir)
	require.NoError(t, err)
	assert.Empty(t, run.Warnings)
	require.Len(t, run.Epochs, 3)
	require.Len(t, run.Resumes, 1)
	assert.Equal(t, int64(20), run.Resumes[0].Step)
	assert.Equal(t, "m-epochs3", run.Meta.Model, "the resumed run's recipe")
	var steps []int64
	for _, s := range run.Steps {
		steps = append(steps, s.Step)
	}
	assert.Equal(t, []int64{5, 10, 15, 20, 25, 30}, steps) // the crashed run's step 25 gave way to the resumed one's
	assert.Greater(t, run.Epochs[2].Wall, run.Epochs[1].Wall, "the wall time goes on")

	// Without a log, Append starts one; on a fresh log Resume writes nothing.
	fresh := filepath.Join(t.TempDir(), "new")
	w, err = Append(fresh, Record{Framework: "plumb", Model: "m"})
	require.NoError(t, err)
	examples, err = w.Resume(1, 0)
	require.NoError(t, err)
	assert.Zero(t, examples)
	require.NoError(t, w.Close())
	run, err = Read(fresh)
	require.NoError(t, err)
	assert.Empty(t, run.Resumes)
}

// failAfter accepts n writes, then writes half of each and fails as a
// full disk does.
type failAfter struct {
	f *os.File
	n int
}

func (d *failAfter) Write(p []byte) (int, error) {
	if d.n > 0 {
		d.n--
		return d.f.Write(p)
	}
	n, _ := d.f.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

// A write that fails part-way (a full disk) cuts its partial line off
// again and makes the Writer refuse later records, so the log stays a
// readable prefix of the run.
func TestFailedWriteLeavesNoTornLine(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, Record{Framework: "plumb", Model: "m"})
	require.NoError(t, err)
	w.out = &failAfter{f: w.f, n: 2}
	require.NoError(t, w.Write(Record{Kind: KindStep, Epoch: 1, Step: 1}))
	require.NoError(t, w.Write(Record{Kind: KindStep, Epoch: 1, Step: 2}))
	err = w.Write(Record{Kind: KindStep, Epoch: 1, Step: 3})
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.ErrorContains(t, err, "the log keeps the records before this one")
	assert.Equal(t, err, w.Write(Record{Kind: KindStep, Epoch: 1, Step: 4}))
	require.NoError(t, w.Close())
	run, err := Read(dir)
	require.NoError(t, err)
	assert.Len(t, run.Steps, 2)
	assert.Empty(t, run.Warnings)
}

// Logs past a limit end in an error naming the line and the limit, not in
// an out-of-memory crash.
func TestParseLimits(t *testing.T) {
	many := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"kind":"epoch","metrics":{`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"m%d":1`, i)
		}
		b.WriteString("}}\n")
		return b.String()
	}
	run := "{\"kind\":\"run\"}\n"
	tests := []struct {
		name, log string
		lim       Limits
		want      string
	}{
		{"long line", run + `{"kind":"step","model":"` + strings.Repeat("x", 100) + "\"}\n", Limits{LineBytes: 64}, "line 2 (offset 15): longer than 64 bytes (Limits.LineBytes)"},
		{"bytes", run + strings.Repeat("{\"kind\":\"step\"}\n", 10), Limits{Bytes: 100}, "the log is longer than 100 bytes (Limits.Bytes)"},
		{"records", run + strings.Repeat("{\"kind\":\"step\"}\n", 10), Limits{Records: 5}, "line 6 (offset 79): more than 5 records (Limits.Records)"},
		{"metric names", run + many(2000), Limits{}, "line 2 (offset 15): more than 256 metric names in the log (Limits.Metrics)"},
		{"metric values", run + strings.Repeat(many(3), 5), Limits{MetricValues: 10}, "line 5 (offset "},
	}
	for _, tc := range tests {
		_, err := ParseLimits(strings.NewReader(tc.log), tc.lim)
		assert.ErrorContains(t, err, tc.want, tc.name)
	}
	got, err := ParseLimits(strings.NewReader(run+many(300)), Limits{Metrics: 300})
	require.NoError(t, err, "a limit can be raised")
	assert.Len(t, got.Epochs[0].Metrics, 300)

}
