package metrics

import (
	"fmt"
	"math"
)

// RMSE is the root of the mean squared difference of pred and target.
func RMSE[F Float](pred, target []F) (float64, error) {
	if len(pred) != len(target) || len(pred) == 0 {
		return 0, fmt.Errorf("metrics: RMSE: %d predictions and %d targets; want the same number, at least 1", len(pred), len(target))
	}
	var s float64
	for i, p := range pred {
		d := float64(p) - float64(target[i])
		s += d * d
	}
	return math.Sqrt(s / float64(len(pred))), nil
}

// Perplexity is exp(nll / tokens): nll the summed negative log-likelihood
// (natural log) of tokens predicted tokens, as a language model's mean
// cross-entropy loss times the tokens it covered.
func Perplexity(nll float64, tokens int) (float64, error) {
	if tokens < 1 || nll < 0 || math.IsNaN(nll) {
		return 0, fmt.Errorf("metrics: Perplexity: nll %v over %d tokens; want nll >= 0 and at least 1 token", nll, tokens)
	}
	return math.Exp(nll / float64(tokens)), nil
}
