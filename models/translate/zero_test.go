package translate_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/translate"
)

// Every exported function and method of package translate, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Tokenize":      translate.Tokenize,
			"Train":         translate.Train,
			"TrainConfig":   translate.TrainConfig,
			"DefaultConfig": translate.DefaultConfig,
			"LoadData":      translate.LoadData,
			"New":           translate.New,
			"DefaultSizes":  translate.DefaultSizes,
		},
		Types: []any{
			(*translate.Chapter)(nil),
			(*translate.Config)(nil),
			(*translate.Data)(nil),
			(*translate.Model)(nil),
			(*translate.Sizes)(nil),
			(*translate.State)(nil),
		},
	})
}
