package srl_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/srl"
)

// Every exported function and method of package srl, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Optimizer":   srl.Optimizer,
			"Train":       srl.Train,
			"TrainConfig": srl.TrainConfig,
			"BookConfig":  srl.BookConfig,
			"LoadData":    srl.LoadData,
			"New":         srl.New,
			"Evaluate":    srl.Evaluate,
			"Book":        srl.Book,
		},
		Types: []any{
			(*srl.Chapter)(nil),
			(*srl.ModelConfig)(nil),
			(*srl.Config)(nil),
			(*srl.Data)(nil),
			(*srl.Model)(nil),
			(*srl.Result)(nil),
			(*srl.Sizes)(nil),
		},
	})
}
