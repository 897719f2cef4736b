package mnist_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/mnist"
)

// Every exported function and method of package mnist, called with zero
// values and nils, returns an error instead of panicking. The table is
// checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"NewMLP":   mnist.NewMLP,
			"NewCNN":   mnist.NewCNN,
			"New":      mnist.New,
			"Train":    mnist.Train,
			"Evaluate": mnist.Evaluate,
		},
		Types: []any{
			(*mnist.Model)(nil),
			(*mnist.Config)(nil),
			(*mnist.Progress)(nil),
			(*mnist.Epoch)(nil),
		},
	})
}
