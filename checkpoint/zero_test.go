package checkpoint_test

import (
	"testing"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package checkpoint, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Save":      checkpoint.Save,
			"CheckPath": checkpoint.CheckPath,
			"Load":      checkpoint.Load,
			"Read":      checkpoint.Read,
			"SaveMeta":  checkpoint.SaveMeta,
			"Meta":      checkpoint.Meta,
		},
		Types: []any{},
	})
}
