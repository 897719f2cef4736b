package initializer_test

import (
	"testing"

	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/tensor"
)

// Every exported function of package initializer, called with zero values
// and nils, returns an error instead of panicking. The table is checked
// against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Samples: []any{tensor.NewRNG(1)},
		Funcs: map[string]any{
			"Uniform":            initializer.Uniform,
			"Normal":             initializer.Normal,
			"Fans":               initializer.Fans,
			"GlorotUniform":      initializer.GlorotUniform,
			"GlorotUniformKeras": initializer.GlorotUniformKeras,
			"GlorotNormal":       initializer.GlorotNormal,
			"HeNormal":           initializer.HeNormal,
			"HeUniform":          initializer.HeUniform,
			"Orthogonal":         initializer.Orthogonal,
		},
		Types: []any{(*initializer.Func)(nil)},
	})
}
