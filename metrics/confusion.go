package metrics

import "fmt"

// Confusion counts predictions against labels over classes 0..n-1, for
// precision, recall and F1 per class and averaged. Add batches as they
// come; the zero value is not usable, see NewConfusion.
type Confusion struct {
	n      int
	counts []int64 // counts[label*n + pred]
}

// NewConfusion returns an empty confusion matrix over n >= 1 classes.
func NewConfusion(n int) (*Confusion, error) {
	if n < 1 {
		return nil, fmt.Errorf("metrics: NewConfusion: %d classes; want at least 1", n)
	}
	return &Confusion{n: n, counts: make([]int64, n*n)}, nil
}

// Add counts each pair (pred[i], labels[i]).
func (c *Confusion) Add(pred, labels []int) error {
	if len(pred) != len(labels) {
		return fmt.Errorf("metrics: Confusion.Add: %d predictions and %d labels", len(pred), len(labels))
	}
	for i, p := range pred {
		if l := labels[i]; p < 0 || p >= c.n || l < 0 || l >= c.n {
			return fmt.Errorf("metrics: Confusion.Add: prediction %d or label %d at %d outside [0, %d)", p, l, i, c.n)
		}
	}
	for i, p := range pred {
		c.counts[labels[i]*c.n+p]++
	}
	return nil
}

// Count is how often class label was predicted as pred.
// A class outside [0, n) has count 0.
func (c *Confusion) Count(label, pred int) int64 {
	if c == nil || label < 0 || pred < 0 || label >= c.n || pred >= c.n {
		return 0
	}
	return c.counts[label*c.n+pred]
}

// tpFpFn returns class k's true positives, false positives and false
// negatives.
func (c *Confusion) tpFpFn(k int) (tp, fp, fn int64) {
	tp = c.Count(k, k)
	for j := range c.n {
		if j != k {
			fp += c.Count(j, k)
			fn += c.Count(k, j)
		}
	}
	return tp, fp, fn
}

// PRF is a precision, recall and F1 triple.
type PRF struct{ Precision, Recall, F1 float64 }

// prf computes the triple from counts; a ratio with a zero denominator is
// 0, as scikit-learn's zero_division=0.
func prf(tp, fp, fn int64) PRF {
	var r PRF
	if tp+fp > 0 {
		r.Precision = float64(tp) / float64(tp+fp)
	}
	if tp+fn > 0 {
		r.Recall = float64(tp) / float64(tp+fn)
	}
	if r.Precision+r.Recall > 0 {
		r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
	}
	return r
}

// Class is class k's precision, recall and F1 (k the positive class).
func (c *Confusion) Class(k int) PRF {
	if k < 0 || k >= c.n {
		return PRF{}
	}
	return prf(c.tpFpFn(k))
}

// Macro is the unweighted mean of every class's precision, recall and F1
// (scikit-learn's average="macro").
func (c *Confusion) Macro() PRF {
	var m PRF
	for k := range c.n {
		r := c.Class(k)
		m.Precision += r.Precision / float64(c.n)
		m.Recall += r.Recall / float64(c.n)
		m.F1 += r.F1 / float64(c.n)
	}
	return m
}

// Micro pools the counts of every class (average="micro"); with every
// example in exactly one class it equals accuracy.
func (c *Confusion) Micro() PRF {
	var tp, fp, fn int64
	for k := range c.n {
		a, b, d := c.tpFpFn(k)
		tp, fp, fn = tp+a, fp+b, fn+d
	}
	return prf(tp, fp, fn)
}
