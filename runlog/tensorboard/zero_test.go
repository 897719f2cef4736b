package tensorboard_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/runlog/tensorboard"
)

// Every exported function and method of package tensorboard, called with
// zero values and nils, returns an error instead of panicking. The table
// is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Create":    tensorboard.Create,
			"Read":      tensorboard.Read,
			"ReadLimit": tensorboard.ReadLimit,
			"Parse":     tensorboard.Parse,
		},
		Types: []any{
			(*tensorboard.Writer)(nil),
			(*tensorboard.Scalar)(nil),
		},
	})
}
