package dist_test

import (
	"testing"

	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package dist, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"GatherRows":        dist.GatherRows,
			"Launched":          dist.Launched,
			"LaunchedRank":      dist.LaunchedRank,
			"RingAllreduce":     dist.RingAllreduce,
			"Timeout":           dist.Timeout,
			"NewGroup":          dist.NewGroup,
			"Open":              dist.Open,
			"Single":            dist.Single,
			"FitAlphaBeta":      dist.FitAlphaBeta,
			"Project":           dist.Project,
			"NewReplicas":       dist.NewReplicas,
			"ModelFingerprint":  dist.ModelFingerprint,
			"RecipeFingerprint": dist.RecipeFingerprint,
			"Agree":             dist.Agree,
			"Abort":             dist.Abort,
		},
		Types: []any{
			(*dist.Comm)(nil),
			(*dist.Network)(nil),
			(*dist.Projection)(nil),
			(*dist.Replicas)(nil),
			(*dist.Fingerprint)(nil),
			(*dist.Field)(nil),
			(*dist.Mismatch)(nil),
		},
	})
}
