package plot_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/runlog/plot"
)

// Every exported function of package plot, called with zero values and
// nils, returns an error instead of panicking. The table is checked
// against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Samples: []any{[]*runlog.Run{nil, {}}},
		Funcs:   map[string]any{"Runs": plot.Runs, "Draw": plot.Draw},
		Types:   []any{(*plot.Options)(nil)},
	})
}
