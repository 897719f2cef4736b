package sentiment_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/sentiment"
)

// Every exported function and method of package sentiment, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Evaluate":       sentiment.Evaluate,
			"Evaluator":      sentiment.Evaluator,
			"Loss":           sentiment.Loss,
			"NewOptimizer":   sentiment.NewOptimizer,
			"NewCNN":         sentiment.NewCNN,
			"FromReviews":    sentiment.FromReviews,
			"Load":           sentiment.Load,
			"LoadProgress":   sentiment.LoadProgress,
			"New":            sentiment.New,
			"NewStackedLSTM": sentiment.NewStackedLSTM,
		},
		Types: []any{
			(*sentiment.Chapter)(nil),
			(*sentiment.ModelConfig)(nil),
			(*sentiment.CNN)(nil),
			(*sentiment.Data)(nil),
			(*sentiment.Model)(nil),
			(*sentiment.StackedLSTM)(nil),
		},
	})
}
