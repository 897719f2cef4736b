package conll05_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/conll05"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package conll05, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Read":       conll05.Read,
			"Load":       conll05.Load,
			"ReadLimits": conll05.ReadLimits,
			"LoadLimits": conll05.LoadLimits,
			"LabelVocab": conll05.LabelVocab,
			"LoadDicts":  conll05.LoadDicts,
			"Dataset":    conll05.Dataset,
		},
		Types: []any{
			(*conll05.Example)(nil),
		},
	})
}

// Zero values and nils reach every reader as errors, never as panics.
func TestZeroInputsAreErrors(t *testing.T) {
	errs := map[string]func() error{
		"Read":       func() error { _, err := conll05.Read(nil, nil, "", ""); return err },
		"Load":       func() error { _, err := conll05.Load("", ""); return err },
		"ReadLimits": func() error { _, err := conll05.ReadLimits(nil, nil, "", "", data.Limits{}); return err },
		"LoadLimits": func() error { _, err := conll05.LoadLimits("", "", data.Limits{}); return err },
		"LabelVocab": func() error { _, err := conll05.LabelVocab(nil, ""); return err },
		"LoadDicts":  func() error { _, _, _, err := conll05.LoadDicts(""); return err },
		"Dataset":    func() error { _, err := conll05.Dataset(nil, nil, nil, nil); return err },
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
}
