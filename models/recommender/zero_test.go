package recommender_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/recommender"
)

// Every exported function and method of package recommender, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"NewOptimizer":  recommender.NewOptimizer,
			"Target":        recommender.Target,
			"FromMovieLens": recommender.FromMovieLens,
			"Load":          recommender.Load,
			"New":           recommender.New,
		},
		Types: []any{
			(*recommender.Chapter)(nil),
			(*recommender.Catalog)(nil),
			(*recommender.Movie)(nil),
			(*recommender.Data)(nil),
			(*recommender.Inputs)(nil),
			(*recommender.Model)(nil),
			(*recommender.Sizes)(nil),
		},
	})
}
