// Package vec holds the elementwise loops the kernels run over contiguous
// runs of memory: adding one run into another, and a constant into a run.
// The Go compiler does not vectorise loops, so on amd64 with AVX the
// float32 forms run in assembly, eight lanes at a time (vec_amd64.s); other
// types and CPUs take the Go loops, which the tests check them against.
package vec

// Float is the set of element types the loops take.
type Float interface{ float32 | float64 }

// Add adds src into dst: dst[i] += src[i] for every i < len(src). dst must
// be at least as long as src.
func Add[T Float](dst, src []T) {
	dst = dst[:len(src)]
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		add32(&d[0], &any(src).([]float32)[0], done)
	}
	for i := done; i < len(src); i++ {
		dst[i] += src[i]
	}
}

// AddConst adds v to every element of dst.
func AddConst[T Float](dst []T, v T) {
	done := 0
	if d, ok := any(dst).([]float32); ok && hasAVX && len(d) >= 8 {
		done = len(d) &^ 7
		addConst32(&d[0], any(v).(float32), done)
	}
	for i := done; i < len(dst); i++ {
		dst[i] += v
	}
}
