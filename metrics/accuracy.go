package metrics

import (
	"fmt"
	"math"
)

// Float is the element type of score slices.
type Float interface{ ~float32 | ~float64 }

// Accuracy is the fraction of positions where pred equals labels.
func Accuracy(pred, labels []int) (float64, error) {
	if len(pred) != len(labels) || len(pred) == 0 {
		return 0, fmt.Errorf("metrics: Accuracy: %d predictions and %d labels; want the same number, at least 1", len(pred), len(labels))
	}
	hit := 0
	for i, p := range pred {
		if p == labels[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(pred)), nil
}

// Argmax returns the class of the highest score in each row of scores, a
// row-major [len(scores)/classes, classes] matrix; the first wins a tie
// and a NaN never wins (a row of NaNs gives 0).
func Argmax[F Float](scores []F, classes int) ([]int, error) {
	if err := checkScores("Argmax", scores, classes); err != nil {
		return nil, err
	}
	out := make([]int, len(scores)/classes)
	for r := range out {
		row := scores[r*classes : (r+1)*classes]
		best := 0
		for c, v := range row {
			if v > row[best] || (row[best] != row[best] && v == v) {
				best = c
			}
		}
		out[r] = best
	}
	return out, nil
}

// TopK is the fraction of rows of scores (row-major, [len(labels),
// classes]) whose label is among the k highest scores, as TensorFlow's
// in_top_k: a label is in the top k when fewer than k classes score
// strictly higher, so ties at the boundary count in its favour, and a
// label whose score is NaN or infinite is never in.
func TopK[F Float](scores []F, classes int, labels []int, k int) (float64, error) {
	if err := checkScores("TopK", scores, classes); err != nil {
		return 0, err
	}
	rows := len(scores) / classes
	if rows != len(labels) || k < 1 {
		return 0, fmt.Errorf("metrics: TopK: %d rows of %d scores, %d labels, k=%d; want one label per row and k >= 1", rows, classes, len(labels), k)
	}
	hit := 0
	for r, l := range labels {
		if l < 0 || l >= classes {
			return 0, fmt.Errorf("metrics: TopK: label %d of row %d outside [0, %d)", l, r, classes)
		}
		row := scores[r*classes : (r+1)*classes]
		t := float64(row[l])
		if math.IsNaN(t) || math.IsInf(t, 0) {
			continue
		}
		higher := 0
		for _, v := range row {
			if float64(v) > t {
				higher++
			}
		}
		if higher < k {
			hit++
		}
	}
	return float64(hit) / float64(rows), nil
}

func checkScores[F Float](fn string, scores []F, classes int) error {
	if classes < 1 || len(scores) == 0 || len(scores)%classes != 0 {
		return fmt.Errorf("metrics: %s: %d scores do not make rows of %d classes", fn, len(scores), classes)
	}
	return nil
}
