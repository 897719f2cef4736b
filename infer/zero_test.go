package infer_test

import (
	"testing"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package infer, called with zero
// values and nils, returns an error instead of panicking. The table is
// checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Trace":      infer.Trace,
			"TraceLayer": infer.TraceLayer,
			"NewBuilder": infer.NewBuilder,
			"NewCache":   infer.NewCache,
		},
		Types: []any{
			(*infer.Ref)(nil),
			(*infer.Graph)(nil),
			(*infer.Builder)(nil),
			(*infer.Signature)(nil),
			(*infer.Plan)(nil),
			(*infer.Options)(nil),
			(*infer.Forward)(nil),
			(*infer.Cache)(nil),
			(*infer.CacheOptions)(nil),
		},
		MayReturnNil: []string{"Graph.Inputs", "Plan.Inputs", "Plan.Outputs", "Plan.Fallbacks"},
	})
}
