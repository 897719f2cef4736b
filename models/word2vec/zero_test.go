package word2vec_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/word2vec"
)

// Every exported function and method of package word2vec, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"NewOptimizer":  word2vec.NewOptimizer,
			"FromSentences": word2vec.FromSentences,
			"Load":          word2vec.Load,
			"New":           word2vec.New,
		},
		Types: []any{
			(*word2vec.Chapter)(nil),
			(*word2vec.Data)(nil),
			(*word2vec.Model)(nil),
			(*word2vec.Neighbour)(nil),
			(*word2vec.Split)(nil),
		},
	})
}
