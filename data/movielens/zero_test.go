package movielens_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/movielens"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package movielens, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Load100K":       movielens.Load100K,
			"Load1M":         movielens.Load1M,
			"Load100KLimits": movielens.Load100KLimits,
			"Load1MLimits":   movielens.Load1MLimits,
			"TitleWords":     movielens.TitleWords,
			"TitleVocab":     movielens.TitleVocab,
		},
		Types: []any{
			(*movielens.Set)(nil),
			(*movielens.Rating)(nil),
			(*movielens.User)(nil),
			(*movielens.Movie)(nil),
		},
	})
}

// Zero values and nils reach every reader as errors, never as panics.
func TestZeroInputsAreErrors(t *testing.T) {
	errs := map[string]func() error{
		"Load100K":       func() error { _, err := movielens.Load100K(""); return err },
		"Load1M":         func() error { _, err := movielens.Load1M(""); return err },
		"Load100KLimits": func() error { _, err := movielens.Load100KLimits("", data.Limits{}); return err },
		"Load1MLimits":   func() error { _, err := movielens.Load1MLimits("", data.Limits{}); return err },
		"TitleVocab":     func() error { _, err := movielens.TitleVocab(nil); return err },
		"Set.Dataset":    func() error { _, err := new(movielens.Set).Dataset(nil); return err },
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
}
