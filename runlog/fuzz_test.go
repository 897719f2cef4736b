package runlog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary bytes to the run-log parser, within small
// limits so that the limits' checks are reached too. It must never panic;
// a log it accepts begins with a run record, holds only steps and epochs
// besides resume records, keeps only the last line's bytes out (a torn
// line, with a warning), and Summarize and Table take it.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		`{"kind":"run","framework":"plumb","model":"m","config":{"batch":64}}` + "\n",
		`{"kind":"run"}` + "\n" + `{"kind":"step","epoch":1,"step":5,"examples":320,"loss":0.9}` + "\n" +
			`{"kind":"epoch","epoch":1,"step":10,"metrics":{"accuracy":0.9}}` + "\n" +
			`{"kind":"resume","epoch":1,"step":5}` + "\n" + `{"kind":"epoch","epoch":1,"st`,
		`{"kind":"run"}` + "\n\n" + `{"kind":"epoch","metrics":{"a":1,"b":2,"c":3}}`,
		`{"kind":"step"}`,
		`{"kind":"run"}` + "\n" + `{"kind":"batch"}` + "\n",
		`{"kind":"run"}` + "\n" + strings.Repeat("x", 300) + "\n",
	} {
		f.Add([]byte(seed))
	}
	lim := Limits{Bytes: 4096, LineBytes: 256, Records: 16, Metrics: 4, MetricValues: 8}
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := ParseLimits(bytes.NewReader(data), lim)
		if err != nil {
			assert.Nil(t, run)
			return
		}
		require.Equal(t, KindRun, run.Meta.Kind)
		for _, s := range run.Steps {
			require.Equal(t, KindStep, s.Kind)
		}
		for _, e := range run.Epochs {
			require.Equal(t, KindEpoch, e.Kind)
		}
		require.LessOrEqual(t, len(run.Warnings), 1)
		require.LessOrEqual(t, 1+len(run.Steps)+len(run.Epochs)+len(run.Resumes), lim.Records)
		Summarize(run)
		Table([]*Run{run})
	})
}
