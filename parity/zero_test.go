package parity_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/parity"
)

// Every exported function and method of package parity, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"FormatTable": parity.FormatTable,
			"ReadNpy":     parity.ReadNpy,
			"LoadCases":   parity.LoadCases,
			"CheckCase":   parity.CheckCase,
			"Rows":        parity.Rows,
			"Run":         parity.Run,
		},
		Types: []any{
			(*parity.Attrs)(nil),
			(*parity.Case)(nil),
			(*parity.CaseResult)(nil),
			(*parity.Mismatch)(nil),
			(*parity.Row)(nil),
			(*parity.Tolerance)(nil),
		},
	})
}
