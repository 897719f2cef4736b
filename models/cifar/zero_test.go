package cifar_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/cifar"
)

// Every exported function and method of package cifar, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Loss":        cifar.Loss,
			"HostFields":  cifar.HostFields,
			"Augment":     cifar.Augment,
			"Evaluate":    cifar.Evaluate,
			"Train":       cifar.Train,
			"New":         cifar.New,
			"NewResNet":   cifar.NewResNet,
			"NewVGG":      cifar.NewVGG,
			"ChannelNorm": cifar.ChannelNorm,
		},
		Types: []any{
			(*cifar.Chapter)(nil),
			(*cifar.ModelConfig)(nil),
			(*cifar.Config)(nil),
			(*cifar.Net)(nil),
			(*cifar.Sizes)(nil),
			(*cifar.Norm)(nil),
		},
	})
}
