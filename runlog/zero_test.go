package runlog_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/runlog"
)

// Every exported function and method of package runlog, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"RSS":         runlog.RSS,
			"Table":       runlog.Table,
			"Parse":       runlog.Parse,
			"Read":        runlog.Read,
			"Summarize":   runlog.Summarize,
			"Create":      runlog.Create,
			"Append":      runlog.Append,
			"Start":       runlog.Start,
			"NewWriter":   runlog.NewWriter,
			"ParseLimits": runlog.ParseLimits,
			"ReadLimits":  runlog.ReadLimits,
			"Display":     runlog.Display,
		},
		Types: []any{
			(*runlog.Record)(nil),
			(*runlog.Run)(nil),
			(*runlog.Summary)(nil),
			(*runlog.Writer)(nil),
			(*runlog.Limits)(nil),
			(*runlog.Mirror)(nil),
			(*runlog.Shown)(nil),
		},
	})
}
