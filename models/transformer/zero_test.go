package transformer_test

import (
	"testing"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/transformer"
	"github.com/plumbml/plumb/tensor"
)

// Every exported function and method of package transformer, called with
// zero values, nils and samples, returns an error (or a value carrying
// one) instead of panicking. The table is checked against the package's
// source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	tape := graph.NewEvalTape()
	apicheck.Check(t, ".", apicheck.API{
		Samples: []any{tape, tape.Const(tensor.Zeros(tensor.Float32, 2, 3, 8)), tensor.NewRNG(1)},
		Funcs: map[string]any{
			"New":             transformer.New,
			"Step":            transformer.Step,
			"ReorderCache":    transformer.ReorderCache,
			"StepPrefixes":    transformer.StepPrefixes,
			"ReorderPrefixes": transformer.ReorderPrefixes,
			"Tokenize":        transformer.Tokenize,
			"LoadData":        transformer.LoadData,
			"Dataset":         transformer.Dataset,
			"NewTokenBatches": transformer.NewTokenBatches,
			"WriteExport":     transformer.WriteExport,
			"DefaultRecipe":   transformer.DefaultRecipe,
		},
		Types: []any{
			(*transformer.Config)(nil),
			(*transformer.Model)(nil),
			(*transformer.Cache)(nil),
			(*transformer.Prefixes)(nil),
			(*transformer.Chapter)(nil),
			(*transformer.Recipe)(nil),
			(*transformer.Search)(nil),
			(*transformer.TokenBatches)(nil),
			(*transformer.Data)(nil),
			(*transformer.Pair)(nil),
		},
	})
}
