package tensor

import (
	"fmt"
	"math"
	"strings"
)

// Shape lists the size of each axis, outermost first (row-major).
// The empty shape is a scalar.
type Shape []int

// Size is the number of elements: the product of the dims (1 for a scalar).
func (s Shape) Size() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Equal reports whether two shapes have the same dims.
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy that does not alias s.
func (s Shape) Clone() Shape { return append(Shape{}, s...) }

// Strides returns the row-major element strides of s.
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// String formats the shape as [d0 d1 ...].
func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Axis resolves a possibly negative axis against a rank, NumPy style.
func Axis(axis, rank int) (int, error) {
	if axis < -rank || axis >= rank {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += rank
	}
	return axis, nil
}

// checkDims rejects negative dims and shapes whose element count overflows
// int (which would otherwise wrap to a small or zero Size that lies about
// the shape). Its errors print a copy of shape, so that shape does not
// escape and callers' variadic shapes stay on their stacks.
func checkDims(shape []int) error {
	n, overflow, zero := 1, false, false
	for _, d := range shape {
		switch {
		case d < 0:
			return fmt.Errorf("tensor: negative dim in shape %v", Shape(shape).Clone())
		case d == 0:
			zero = true
		case n > math.MaxInt/d:
			overflow = true
		default:
			n *= d
		}
	}
	if overflow && !zero {
		return fmt.Errorf("tensor: shape %v has more elements than an int can count", Shape(shape).Clone())
	}
	return nil
}
