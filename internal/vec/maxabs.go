package vec

import "github.com/plumbml/plumb/tensor"

// MaxAbs returns the largest |x[i]|, or NaN if x holds a NaN (0 for an
// empty x): the range checks that choose a wider kernel scan whole
// tensors with it. float32 runs eight lanes at a time with AVX.
func MaxAbs[T tensor.Float](x []T) T {
	var m T
	done := 0
	if xf, ok := any(x).([]float32); ok && hasAVX && len(xf) >= 8 {
		done = len(xf) &^ 7
		m = any(maxAbs32(&xf[0], done)).(T)
	}
	for _, v := range x[done:] {
		m = max(m, v, -v) // the builtin keeps NaN
	}
	return m
}
