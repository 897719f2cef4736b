package vec

import "github.com/plumbml/plumb/tensor"

// Clamp writes std::min(std::max(x, lo), hi) into dst (ONNX Clip as ONNX
// Runtime computes it): NaN passes, a bound wins only when x lies strictly
// beyond it, so −0 stays −0 under lo = 0, and lo > hi gives hi. float32
// runs 8 lanes at a time on AVX (VMAXPS and VMINPS return their second
// source when either is NaN or both are zeros, which is std::max's and
// std::min's rule with x second); the rest runs clampOne.
func Clamp[T tensor.Float](dst, x []T, lo, hi T) {
	dst = dst[:len(x)]
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		clamp32(&d[0], &any(x).([]float32)[0], float32(lo), float32(hi), done)
	}
	for i := done; i < len(x); i++ {
		dst[i] = clampOne(x[i], lo, hi)
	}
}

// clampOne is std::min(std::max(v, lo), hi).
func clampOne[T tensor.Float](v, lo, hi T) T {
	if v < lo {
		v = lo
	}
	if hi < v {
		v = hi
	}
	return v
}
