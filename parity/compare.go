package parity

import (
	"fmt"
	"math"
	"strings"

	"github.com/plumbml/plumb/tensor"
)

// pair is one tensor of a case: what Plumb computed, what TF recorded
// and, for a float32 case recorded with it, the float64 truth (TF's
// float64 run on the same inputs, truth_<name>.npy; nil otherwise).
type pair struct {
	name      string // the golden's file name without .npy: out, grad1, after3, step2_var
	got, want *tensor.Tensor
	truth     *tensor.Tensor
}

// truthFactor is how far Plumb's error against the float64 truth may
// exceed TF's own float32 error against it (docs/parity.md, "Tolerance
// policy"): a float32 result is as good as TF's when it is within 1.5 times
// TF's largest error on the same tensor.
const truthFactor = 1.5

// Mismatch is the worst element of a tensor that broke its bound, or a
// tensor whose dtype or shape differs from the golden's.
type Mismatch struct {
	Case      string // <op>/<case>
	Tensor    string
	Index     []int
	Got, Want float64
	Bound     float64
	Problem   string // set instead of the values for a dtype or shape mismatch

	// For a tensor with a float64 truth: the truth at Index and TF's
	// largest error against the truth over the tensor. The error checked
	// against Bound is then |Got - Truth|.
	HasTruth     bool
	Truth, TFErr float64
}

func (m Mismatch) String() string {
	if m.Problem != "" {
		return fmt.Sprintf("%s: %s: %s", m.Case, m.Tensor, m.Problem)
	}
	if m.HasTruth {
		return fmt.Sprintf("%s: %s%v: got %.9g, want %.9g, float64 truth %.9g (|got-truth| %.3g > bound %.3g = max(tolerance, %.1f × TF's error %.3g))",
			m.Case, m.Tensor, m.Index, m.Got, m.Want, m.Truth, math.Abs(m.Got-m.Truth), m.Bound, truthFactor, m.TFErr)
	}
	return fmt.Sprintf("%s: %s%v: got %.9g, want %.9g (|diff| %.3g > bound %.3g)",
		m.Case, m.Tensor, m.Index, m.Got, m.Want, math.Abs(m.Got-m.Want), m.Bound)
}

// CaseResult is the outcome of one case: the largest errors over all its
// tensors, and its mismatches (at most one per tensor) or the error that
// kept it from running.
type CaseResult struct {
	Case       *Case
	Tol        Tolerance
	MaxAbs     float64
	MaxRel     float64 // over elements whose golden value is nonzero
	Mismatches []Mismatch
	Err        error

	// Truth is set when every tensor of the case had a float64 truth, and
	// then PlumbErr and TFErr are Plumb's and TF's largest absolute errors
	// against it.
	Truth           bool
	PlumbErr, TFErr float64
}

// Failed reports whether the case did not run or broke its bound.
func (r CaseResult) Failed() bool { return r.Err != nil || len(r.Mismatches) > 0 }

// Message describes a failed case, one line per mismatch.
func (r CaseResult) Message() string {
	if r.Err != nil {
		return fmt.Sprintf("%s: %v", r.Case.ID(), r.Err)
	}
	lines := make([]string, len(r.Mismatches))
	for i, m := range r.Mismatches {
		lines[i] = m.String()
	}
	return strings.Join(lines, "\n")
}

// compare checks every pair of a case against tol, or against the truth
// rule for pairs that have a truth.
func compare(c *Case, tol Tolerance, pairs []pair) CaseResult {
	r := CaseResult{Case: c, Tol: tol, Truth: len(pairs) > 0}
	for _, p := range pairs {
		r.Truth = r.Truth && p.truth != nil
		var m Mismatch
		var bad bool
		if p.truth != nil {
			m, bad = compareTruth(c.ID(), p, tol, &r)
		} else {
			m, bad = compareTensor(c.ID(), p, tol, &r)
		}
		if bad {
			r.Mismatches = append(r.Mismatches, m)
		}
	}
	return r
}

// compareTruth holds Plumb's result to the float64 truth: an element
// passes when |got - truth| <= max(tol.Bound(truth), 1.5·e), where e is
// TF's largest float32 error against the truth over the tensor. TF's
// error is taken over the whole tensor, not per element, because an
// element where TF happens to round onto the truth says nothing about the
// precision float32 allows there. It folds the errors against TF's golden
// into r as compareTensor does, and Plumb's and TF's errors against the
// truth into r.PlumbErr and r.TFErr, and returns the worst out-of-bound
// element, if any.
func compareTruth(id string, p pair, tol Tolerance, r *CaseResult) (Mismatch, bool) {
	m := Mismatch{Case: id, Tensor: p.name, HasTruth: true}
	if p.got.DType() != p.want.DType() || !tensor.SameShape(p.got, p.want) {
		m.Problem = fmt.Sprintf("got %v%v, want %v%v", p.got.DType(), p.got.Shape(), p.want.DType(), p.want.Shape())
		return m, true
	}
	if !tensor.SameShape(p.truth, p.want) {
		m.Problem = fmt.Sprintf("float64 truth %v, want %v", p.truth.Shape(), p.want.Shape())
		return m, true
	}
	tfErr := 0.0
	for i := range p.want.Size() {
		tfErr = math.Max(tfErr, absErr(p.want.At(i), p.truth.At(i)))
	}
	r.TFErr = math.Max(r.TFErr, tfErr)
	worst, at := 0.0, -1
	for i := range p.want.Size() {
		g, w, t := p.got.At(i), p.want.At(i), p.truth.At(i)
		if d := absErr(g, w); d > 0 {
			r.MaxAbs = math.Max(r.MaxAbs, d)
			if w != 0 {
				r.MaxRel = math.Max(r.MaxRel, d/math.Abs(w))
			}
		}
		d := absErr(g, t)
		r.PlumbErr = math.Max(r.PlumbErr, d)
		if b := math.Max(tol.Bound(t), truthFactor*tfErr); d > b && (at < 0 || d-b > worst) {
			worst, at = d-b, i
		}
	}
	if at < 0 {
		return m, false
	}
	m.Index = unravel(at, p.want.Shape())
	m.Got, m.Want, m.Truth, m.TFErr = p.got.At(at), p.want.At(at), p.truth.At(at), tfErr
	m.Bound = math.Max(tol.Bound(m.Truth), truthFactor*tfErr)
	return m, true
}

// absErr is |a - b|, 0 when both are NaN or the same infinity, and +Inf
// when only one is NaN or infinite.
func absErr(a, b float64) float64 {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return 0
	}
	d := math.Abs(a - b)
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return math.Inf(1)
	}
	return d
}

// compareTensor folds one pair's errors into r and returns its worst
// out-of-bound element (the one furthest past its bound), if any.
// NaN matches NaN and an infinity matches the same infinity, as in
// numpy's assert_allclose.
func compareTensor(id string, p pair, tol Tolerance, r *CaseResult) (Mismatch, bool) {
	m := Mismatch{Case: id, Tensor: p.name}
	if p.got.DType() != p.want.DType() || !tensor.SameShape(p.got, p.want) {
		m.Problem = fmt.Sprintf("got %v%v, want %v%v", p.got.DType(), p.got.Shape(), p.want.DType(), p.want.Shape())
		return m, true
	}
	worst, at := 0.0, -1
	for i := range p.want.Size() {
		g, w := p.got.At(i), p.want.At(i)
		d := absErr(g, w)
		if d == 0 {
			continue
		}
		r.MaxAbs = math.Max(r.MaxAbs, d)
		if w != 0 {
			r.MaxRel = math.Max(r.MaxRel, d/math.Abs(w))
		}
		if b := tol.Bound(w); d > b && (at < 0 || d-b > worst) {
			worst, at = d-b, i
		}
	}
	if at < 0 {
		return m, false
	}
	m.Index = unravel(at, p.want.Shape())
	m.Got, m.Want, m.Bound = p.got.At(at), p.want.At(at), tol.Bound(p.want.At(at))
	return m, true
}

// unravel turns a flat row-major index into per-axis indices.
func unravel(i int, shape tensor.Shape) []int {
	idx := make([]int, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		if shape[a] > 0 {
			idx[a] = i % shape[a]
			i /= shape[a]
		}
	}
	return idx
}
