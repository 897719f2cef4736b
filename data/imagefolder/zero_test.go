package imagefolder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/imagefolder"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package imagefolder, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Load":         imagefolder.Load,
			"LoadLimits":   imagefolder.LoadLimits,
			"LoadProgress": imagefolder.LoadProgress,
		},
	})
}

// Zero values and nils reach every reader as errors, never as panics.
func TestZeroInputsAreErrors(t *testing.T) {
	errs := map[string]func() error{
		"Load":       func() error { _, _, err := imagefolder.Load("", ""); return err },
		"LoadLimits": func() error { _, _, err := imagefolder.LoadLimits("", "", data.Limits{}); return err },
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
}
