package ops

import (
	"golang.org/x/sys/cpu"

	"github.com/plumbml/plumb/tensor"
)

//go:noescape
func max2x2s(n int, r0, r1 *float32, y *float32, arg *int, base, w int)

var haveMax2x2AVX2 = cpu.X86.HasAVX2

// max2x2Fast runs the AVX2 kernel (pool_amd64.s) over the whole groups of
// four windows of max2x2's row when it is float32, and returns how many
// windows it did; max2x2 does the rest.
func max2x2Fast[T tensor.Float](xc []T, top, w, base int, yr []T, ar []int) int {
	y, ok := any(yr).([]float32)
	n := len(yr) / 4 * 4
	if !ok || !haveMax2x2AVX2 || n == 0 {
		return 0
	}
	x := any(xc).([]float32)
	_ = x[top+w+2*n-1] // the last cell read
	_ = ar[n-1]
	max2x2s(n, &x[top], &x[top+w], &y[0], &ar[0], base+top, w)
	return n
}
