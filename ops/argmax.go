package ops

import (
	"github.com/plumbml/plumb/tensor"
)

// The arg reductions pick one element along one axis and say where it is.
// They are not differentiable (an index has no gradient), so they are plain
// functions rather than Ops; for the gradient of the picked values use the
// "max" and "min" reductions.

// ArgMax returns the int64 index of the largest element of x along axis,
// which is removed from the shape (tf.math.argmax); ties go to the first
// index.
func ArgMax(x *tensor.Tensor, axis int) (*tensor.Tensor, error) {
	_, idx, err := argReduce("argmax", x, axis, true)
	return idx, err
}

// ArgMin returns the int64 index of the smallest element of x along axis
// (tf.math.argmin); ties go to the first index.
func ArgMin(x *tensor.Tensor, axis int) (*tensor.Tensor, error) {
	_, idx, err := argReduce("argmin", x, axis, false)
	return idx, err
}

// MaxWithArg returns both the largest elements of x along axis and their
// int64 indices, as ArgMax; the values keep x's dtype.
func MaxWithArg(x *tensor.Tensor, axis int) (values, indices *tensor.Tensor, err error) {
	return argReduce("max_with_arg", x, axis, true)
}

// MinWithArg returns both the smallest elements of x along axis and their
// int64 indices, as ArgMin.
func MinWithArg(x *tensor.Tensor, axis int) (values, indices *tensor.Tensor, err error) {
	return argReduce("min_with_arg", x, axis, false)
}

// argReduce validates x and axis and runs argKernel; greater picks the max.
func argReduce(op string, x *tensor.Tensor, axis int, greater bool) (values, indices *tensor.Tensor, err error) {
	in := []*tensor.Tensor{x}
	dt, err := checkFloat(op, in, 1)
	if err != nil {
		return nil, nil, err
	}
	ax, err := tensor.Axis(axis, x.Rank())
	if err != nil {
		return nil, nil, Errorf(op, in, "%v", err)
	}
	s := x.Shape()
	if s[ax] == 0 {
		return nil, nil, Errorf(op, in, "axis %d is empty", axis)
	}
	outShape := append(s[:ax].Clone(), s[ax+1:]...)
	values = tensor.Zeros(dt, outShape...)
	indices = tensor.Zeros(tensor.Int64, outShape...)
	outer, n, inner := s[:ax].Size(), s[ax], s[ax+1:].Size()
	switch dt {
	case tensor.Float32:
		argKernel(x.Float32s(), values.Float32s(), indices.Int64s(), outer, n, inner, greater)
	case tensor.Float64:
		argKernel(x.Float64s(), values.Float64s(), indices.Int64s(), outer, n, inner, greater)
	}
	return values, indices, nil
}

// argKernel scans x viewed as [outer, n, inner] along its middle axis.
func argKernel[T tensor.Float](x, vals []T, idx []int64, outer, n, inner int, greater bool) {
	for o := 0; o < outer; o++ {
		for k := 0; k < inner; k++ {
			base := o*n*inner + k
			best, at := x[base], 0
			for j := 1; j < n; j++ {
				v := x[base+j*inner]
				if (greater && v > best) || (!greater && v < best) {
					best, at = v, j
				}
			}
			vals[o*inner+k], idx[o*inner+k] = best, int64(at)
		}
	}
}
