package metrics_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/metrics"
)

// Every exported function and method of package metrics, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Accuracy":     metrics.Accuracy,
			"Perplexity":   metrics.Perplexity,
			"Tokenize13a":  metrics.Tokenize13a,
			"BLEU":         metrics.BLEU,
			"NewChunkEval": metrics.NewChunkEval,
			"NewConfusion": metrics.NewConfusion,
			"AUC":          metrics.AUC[float32],
			"Argmax":       metrics.Argmax[float32],
			"RMSE":         metrics.RMSE[float32],
			"TopK":         metrics.TopK[float32],
		},
		Types: []any{
			(*metrics.BLEUScore)(nil),
			(*metrics.Chunk)(nil),
			(*metrics.ChunkCounts)(nil),
			(*metrics.ChunkEval)(nil),
			(*metrics.Confusion)(nil),

			(*metrics.PRF)(nil),
			(*metrics.Scheme)(nil),
		},
		Constraints: []string{"Float"},
	})
}
