package export_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/onnx/export"
)

// Every exported function of package export, called with zero values and
// nils, returns an error or an empty value instead of panicking. The
// table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Export":    export.Export,
			"Save":      export.Save,
			"Marshal":   export.Marshal,
			"Supported": export.Supported,
		},
		Types: []any{
			(*export.Input)(nil),
			(*export.Options)(nil),
		},
	})
}
