package tensor

import (
	"fmt"
)

// DType is the element type of a tensor.
type DType uint8

// The element types Plumb stores. Float32 is the default for models;
// Float64 exists for gradient checks and parity; Int32 and Int64 hold labels,
// indices and token ids.
const (
	Float32 DType = iota + 1
	Float64
	Int32
	Int64
)

// String returns the NumPy-style name of the dtype.
func (d DType) String() string {
	switch d {
	case Float32:
		return "float32"
	case Float64:
		return "float64"
	case Int32:
		return "int32"
	case Int64:
		return "int64"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// IsFloat reports whether d is Float32 or Float64.
func (d DType) IsFloat() bool { return d == Float32 || d == Float64 }

// Size is the number of bytes of one element.
func (d DType) Size() int {
	switch d {
	case Float32, Int32:
		return 4
	case Float64, Int64:
		return 8
	}
	return 0
}

// Elem is the set of Go element types a tensor can hold.
type Elem interface {
	float32 | float64 | int32 | int64
}

// Float is the set of floating-point element types kernels compute in.
type Float interface {
	float32 | float64
}

// DTypeOf returns the dtype that stores elements of type T.
func DTypeOf[T Elem]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int32:
		return Int32
	default:
		return Int64
	}
}

// makeSlice returns a zeroed slice of n elements of dt with capacity c.
func makeSlice(dt DType, n, c int) any {
	switch dt {
	case Float32:
		return make([]float32, n, c)
	case Float64:
		return make([]float64, n, c)
	case Int32:
		return make([]int32, n, c)
	case Int64:
		return make([]int64, n, c)
	}
	panic("tensor: invalid dtype " + dt.String())
}
