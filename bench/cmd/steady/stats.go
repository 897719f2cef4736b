package main

import (
	"fmt"
	"math"
	"slices"
)

// Summary is the distribution of one workload's per-iteration times, one
// sample per block: the best (smallest), the median and the 90th
// percentile, and the spread median/best − 1 that issue 40 judges a
// scheduler by.
type Summary struct {
	Blocks            int
	Best, Median, P90 float64
}

// Spread is median/best − 1: 0 when the typical block is as fast as the
// fastest.
func (s Summary) Spread() float64 { return s.Median/s.Best - 1 }

// Summarize returns the best, median and 90th percentile of samples,
// which must be positive and finite (times). Percentiles interpolate
// linearly between the closest ranks (Hyndman and Fan 1996, definition 7,
// NumPy's default): the p-quantile of n sorted samples is at rank
// h = (n−1)·p, between samples ⌊h⌋ and ⌈h⌉, so the median of an even
// count is the mean of the middle two.
func Summarize(samples []float64) (Summary, error) {
	if len(samples) == 0 {
		return Summary{}, fmt.Errorf("steady: no block times to summarize, want at least one")
	}
	for i, v := range samples {
		if !(v > 0) || math.IsInf(v, 0) {
			return Summary{}, fmt.Errorf("steady: block %d took %v ms per iteration, want a positive finite time", i, v)
		}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return Summary{Blocks: len(s), Best: s[0], Median: quantile(s, 0.5), P90: quantile(s, 0.9)}, nil
}

// quantile is the p-quantile of sorted, non-empty s by linear
// interpolation between closest ranks (definition 7).
func quantile(s []float64, p float64) float64 {
	h := float64(len(s)-1) * p
	lo := int(math.Floor(h))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (h-float64(lo))*(s[hi]-s[lo])
}
