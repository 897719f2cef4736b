package ops_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Every exported function and method of package ops, called with zero
// values, nils and a sample tensor, returns an error instead of panicking.
// The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Samples: []any{tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3), []int{0, 1, 2}, 1},
		// The table is generated from the source (go generate ./ops writes
		// zz_zero_test.go); only a generic function needs an entry here,
		// instantiated.
		Funcs: withGeneric(apiFuncs, map[string]any{"MakeOp": ops.MakeOp[ops.NoAttrs],
			"UnaryRun": ops.UnaryRun[float32], "BinaryRun": ops.BinaryRun[float32]}),
		Types: apiTypes,
	})
}

// withGeneric returns the generated table with the generic functions added.
func withGeneric(funcs, generic map[string]any) map[string]any {
	out := make(map[string]any, len(funcs)+len(generic))
	for k, v := range funcs {
		out[k] = v
	}
	for k, v := range generic {
		out[k] = v
	}
	return out
}
