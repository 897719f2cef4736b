package cifar10_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/cifar10"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package cifar10, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Read":       cifar10.Read,
			"Load":       cifar10.Load,
			"ReadLimits": cifar10.ReadLimits,
			"LoadLimits": cifar10.LoadLimits,
		},
	})
}

// Zero values and nils reach every reader as errors, never as panics.
func TestZeroInputsAreErrors(t *testing.T) {
	errs := map[string]func() error{
		"Read":       func() error { _, err := cifar10.Read(nil, ""); return err },
		"Load":       func() error { _, _, err := cifar10.Load(""); return err },
		"ReadLimits": func() error { _, err := cifar10.ReadLimits(nil, "", data.Limits{}); return err },
		"LoadLimits": func() error { _, _, err := cifar10.LoadLimits("", data.Limits{}); return err },
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
}
