package decode_test

import (
	"testing"

	"github.com/plumbml/plumb/decode"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package decode, called with zero
// values and nils, returns an error instead of panicking. The table is
// checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"BeamSearchBatch": decode.BeamSearchBatch[float32],
			"Greedy":          decode.Greedy[float32],
			"BeamSearch":      decode.BeamSearch[float32],
		},
		Types: []any{
			(*decode.Step[float32])(nil),
			(*decode.Reorder[float32])(nil),
			(*decode.LengthNorm)(nil),
			(*decode.Config)(nil),
			(*decode.Hypothesis)(nil),
		},
	})
}
