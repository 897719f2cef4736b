package data_test

import (
	"testing"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package data, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"NewDataset":  data.NewDataset,
			"ReadIDXMax":  data.ReadIDXMax,
			"ReadIDX":     data.ReadIDX,
			"Dir":         data.Dir,
			"LoadMNIST":   data.LoadMNIST,
			"LoadMNISTFS": data.LoadMNISTFS,
		},
		Types: []any{
			(*data.Dataset)(nil),
			(*data.Batch)(nil),
			(*data.IDX)(nil),
		},
	})
}
