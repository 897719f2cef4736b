package parallel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/parallel"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package parallel, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Read":       parallel.Read,
			"Load":       parallel.Load,
			"ReadLimits": parallel.ReadLimits,
			"LoadLimits": parallel.LoadLimits,
			"Vocab":      parallel.Vocab,
			"Dataset":    parallel.Dataset,
		},
		Types: []any{
			(*parallel.Pair)(nil),
		},
	})
}

// Zero values and nils reach every reader as errors, never as panics.
func TestZeroInputsAreErrors(t *testing.T) {
	errs := map[string]func() error{
		"Read":       func() error { _, err := parallel.Read(nil, nil, "", "", nil); return err },
		"Load":       func() error { _, err := parallel.Load("", "", nil); return err },
		"ReadLimits": func() error { _, err := parallel.ReadLimits(nil, nil, "", "", nil, data.Limits{}); return err },
		"LoadLimits": func() error { _, err := parallel.LoadLimits("", "", nil, data.Limits{}); return err },
		"Dataset":    func() error { _, err := parallel.Dataset(nil, nil, nil, 0); return err },
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
}
