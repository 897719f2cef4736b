package mnist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data/mnist"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package mnist, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"ReadIDX":    mnist.ReadIDX,
			"ReadIDXMax": mnist.ReadIDXMax,
			"Load":       mnist.Load,
			"LoadFS":     mnist.LoadFS,
		},
		Types: []any{
			(*mnist.IDX)(nil),
		},
	})
}

// Zero values and nils reach every reader as errors, never as panics.
func TestZeroInputsAreErrors(t *testing.T) {
	errs := map[string]func() error{
		"Load":    func() error { _, _, err := mnist.Load(""); return err },
		"LoadFS":  func() error { _, _, err := mnist.LoadFS(nil); return err },
		"ReadIDX": func() error { _, err := mnist.ReadIDX(nil); return err },
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
}
