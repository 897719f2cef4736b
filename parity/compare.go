package parity

import (
	"fmt"
	"math"
	"strings"

	"github.com/plumbml/plumb/tensor"
)

// pair is one tensor of a case: what Plumb computed and what TF recorded.
type pair struct {
	name      string // the golden's file name without .npy: out, grad1, after3, step2_var
	got, want *tensor.Tensor
}

// Mismatch is the worst element of a tensor that broke its bound, or a
// tensor whose dtype or shape differs from the golden's.
type Mismatch struct {
	Case      string // <op>/<case>
	Tensor    string
	Index     []int
	Got, Want float64
	Bound     float64
	Problem   string // set instead of the values for a dtype or shape mismatch
}

func (m Mismatch) String() string {
	if m.Problem != "" {
		return fmt.Sprintf("%s: %s: %s", m.Case, m.Tensor, m.Problem)
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

// compare checks every pair of a case against tol.
func compare(c *Case, tol Tolerance, pairs []pair) CaseResult {
	r := CaseResult{Case: c, Tol: tol}
	for _, p := range pairs {
		if m, bad := compareTensor(c.ID(), p, tol, &r); bad {
			r.Mismatches = append(r.Mismatches, m)
		}
	}
	return r
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
		if g == w || (math.IsNaN(g) && math.IsNaN(w)) {
			continue
		}
		d := math.Abs(g - w)
		if math.IsNaN(d) || math.IsInf(d, 0) {
			d = math.Inf(1)
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
