package tblog_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/runlog/tensorboard/tblog"
)

// Every exported function and method of package tblog, called with zero
// values and nils, returns an error instead of panicking. The table is
// checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Scalars":   tblog.Scalars,
			"NewMirror": tblog.NewMirror,
			"Convert":   tblog.Convert,
		},
		Types: []any{(*tblog.Mirror)(nil)},
	})
}
