package graph

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// SparseRows is a gradient that is zero outside a few rows (the first
// axis) of its parameter, such as an embedding table's after a lookup:
// row Rows[k] of the dense gradient is Values[k], every other row is zero.
// Rows are unique and ascending; Values is [len(Rows), the parameter's
// other dims...] in the parameter's dtype. Backward builds it for a
// parameter read only through ops that are ops.SparseGrader, so a step
// that touches 8 rows of a [100000, 16] table costs 8 rows, not the table.
type SparseRows struct {
	Rows   []int
	Values *tensor.Tensor
}

// Validate reports whether s is a well-formed sparse gradient of value:
// rows unique, ascending and in [0, value.Dim(0)), and values of value's
// dtype with one row of value's row shape per row.
func (s *SparseRows) Validate(value *tensor.Tensor) error {
	switch {
	case s == nil || s.Values == nil:
		return fmt.Errorf("graph: sparse gradient without values")
	case value == nil || value.Rank() == 0:
		return fmt.Errorf("graph: sparse gradient of a value without rows")
	}
	want := append(tensor.Shape{len(s.Rows)}, value.Shape()[1:]...)
	if s.Values.DType() != value.DType() || !s.Values.Shape().Equal(want) {
		return fmt.Errorf("graph: sparse gradient values %v%v for %d rows of a %v%v value; want %v%v",
			s.Values.DType(), s.Values.Shape(), len(s.Rows), value.DType(), value.Shape(), value.DType(), want)
	}
	for k, r := range s.Rows {
		if r < 0 || r >= value.Dim(0) || (k > 0 && r <= s.Rows[k-1]) {
			return fmt.Errorf("graph: sparse gradient row %d at position %d: want unique ascending rows in [0, %d)", r, k, value.Dim(0))
		}
	}
	return nil
}

// rowWidth is the number of elements in one row of s.Values.
func (s *SparseRows) rowWidth() int {
	if len(s.Rows) == 0 {
		return 0
	}
	return s.Values.Size() / len(s.Rows)
}

// emptyRows returns a sparse gradient of value with no rows: a zero
// gradient, which is still a gradient (ZeroGrad's result).
func emptyRows(value *tensor.Tensor) *SparseRows {
	return &SparseRows{Values: tensor.Zeros(value.DType(), append(tensor.Shape{0}, value.Shape()[1:]...)...)}
}

// scatterAdd adds s's rows into dst, a dense tensor s is valid for.
func scatterAdd(dst *tensor.Tensor, s *SparseRows) {
	if dst.DType() == tensor.Float32 {
		scatterAddT(dst.Float32s(), s.Values.Float32s(), s.Rows, s.rowWidth())
		return
	}
	scatterAddT(dst.Float64s(), s.Values.Float64s(), s.Rows, s.rowWidth())
}

func scatterAddT[T tensor.Float](dst, vals []T, rows []int, w int) {
	for k, r := range rows {
		d := dst[r*w : (r+1)*w]
		for j, v := range vals[k*w : (k+1)*w] {
			d[j] += v
		}
	}
}

// mergeRows returns a + b, both valid for one value, as new rows and
// values (neither input is changed, nor shared when both have rows). A row
// in both sums as a[r] + b[r], the order in which dense gradients add.
func mergeRows(a, b *SparseRows) *SparseRows {
	switch {
	case len(a.Rows) == 0:
		return b
	case len(b.Rows) == 0:
		return a
	}
	rows := make([]int, 0, len(a.Rows)+len(b.Rows))
	for i, j := 0, 0; i < len(a.Rows) || j < len(b.Rows); {
		switch {
		case j == len(b.Rows) || (i < len(a.Rows) && a.Rows[i] < b.Rows[j]):
			rows = append(rows, a.Rows[i])
			i++
		case i == len(a.Rows) || b.Rows[j] < a.Rows[i]:
			rows = append(rows, b.Rows[j])
			j++
		default:
			rows = append(rows, a.Rows[i])
			i, j = i+1, j+1
		}
	}
	rows = slices.Clip(rows)
	shape := append(tensor.Shape{len(rows)}, a.Values.Shape()[1:]...)
	out := &SparseRows{Rows: rows, Values: tensor.Zeros(a.Values.DType(), shape...)}
	// Scatter a then b into out by position: a[r] + b[r] for shared rows.
	w := a.rowWidth()
	for _, s := range []*SparseRows{a, b} {
		pos := make([]int, len(s.Rows))
		for k, r := range s.Rows {
			pos[k], _ = slices.BinarySearch(rows, r)
		}
		if out.Values.DType() == tensor.Float32 {
			scatterAddT(out.Values.Float32s(), s.Values.Float32s(), pos, w)
		} else {
			scatterAddT(out.Values.Float64s(), s.Values.Float64s(), pos, w)
		}
	}
	return out
}
