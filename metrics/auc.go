package metrics

import (
	"fmt"
	"math"
	"slices"
)

// AUC is the area under the ROC curve of scores for binary labels (true:
// positive), computed exactly as the Mann-Whitney statistic: the chance
// that a random positive scores above a random negative, ties counting
// one half (scikit-learn's roc_auc_score; TensorFlow's and Paddle's AUC
// approximate it with threshold buckets). Both classes must be present.
func AUC[F Float](scores []F, labels []bool) (float64, error) {
	if len(scores) != len(labels) {
		return 0, fmt.Errorf("metrics: AUC: %d scores and %d labels", len(scores), len(labels))
	}
	idx := make([]int, len(scores))
	for i := range idx {
		if math.IsNaN(float64(scores[i])) {
			return 0, fmt.Errorf("metrics: AUC: score %d is NaN", i)
		}
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case scores[a] < scores[b]:
			return -1
		case scores[a] > scores[b]:
			return 1
		}
		return 0
	})
	// Sum the (mid-)ranks of the positives.
	var rankSum float64
	pos := 0
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && scores[idx[j]] == scores[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1..j
		for _, k := range idx[i:j] {
			if labels[k] {
				rankSum += mid
				pos++
			}
		}
		i = j
	}
	neg := len(idx) - pos
	if pos == 0 || neg == 0 {
		return 0, fmt.Errorf("metrics: AUC: %d positives and %d negatives; want both", pos, neg)
	}
	return (rankSum - float64(pos)*float64(pos+1)/2) / (float64(pos) * float64(neg)), nil
}
