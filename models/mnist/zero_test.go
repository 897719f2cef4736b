package mnist_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/mnist"
)

// Every exported function and method of package mnist, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Evaluate":  mnist.Evaluate,
			"Evaluator": mnist.Evaluator,
			"Loss":      mnist.Loss,
			"Train":     mnist.Train,
			"New":       mnist.New,
			"NewCNN":    mnist.NewCNN,
			"NewMLP":    mnist.NewMLP,
		},
		Types: []any{
			(*mnist.Chapter)(nil),
			(*mnist.ModelConfig)(nil),
			(*mnist.Config)(nil),
			(*mnist.Epoch)(nil),
			(*mnist.Model)(nil),
			(*mnist.Progress)(nil),
		},
	})
}
