package kpi_test

import (
	"testing"

	"github.com/plumbml/plumb/bench/kpi"
	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/runlog"
)

// Every exported function and method of package kpi, called with zero
// values and nils, returns an error instead of panicking. The table is
// checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Samples: []any{[]*runlog.Run{nil}, []kpi.KPI{{Model: "m", Metric: "loss"}}},
		Funcs: map[string]any{
			"Load":             kpi.Load,
			"Parse":            kpi.Parse,
			"Check":            kpi.Check,
			"Report":           kpi.Report,
			"CheckReference":   kpi.CheckReference,
			"MeasureReference": kpi.MeasureReference,
		},
		Types: []any{
			(*kpi.KPI)(nil),
			(*kpi.Result)(nil),
		},
	})
}
