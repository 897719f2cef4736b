package vec

import (
	"golang.org/x/sys/cpu"

	"github.com/plumbml/plumb/tensor"
)

// max2x2s is MaxPool2x2 on n (a multiple of 4) windows of float32 rows r0
// and r1 (maxpool2x2_amd64.s).
//
//go:noescape
func max2x2s(n int, r0, r1 *float32, y *float32, arg *int, base, w int)

// hasMax2x2AVX2 says whether this CPU runs max2x2s.
var hasMax2x2AVX2 = cpu.X86.HasAVX2

// maxPool2x2Vec runs the AVX2 kernel over the whole groups of four windows
// of MaxPool2x2's row when it is float32, and returns how many windows it
// did; MaxPool2x2 does the rest.
func maxPool2x2Vec[T tensor.Float](x []T, top, w, base int, yr []T, ar []int) int {
	y, ok := any(yr).([]float32)
	n := len(yr) / 4 * 4
	if !ok || !hasMax2x2AVX2 || n == 0 {
		return 0
	}
	x32 := any(x).([]float32)
	_ = x32[top+w+2*n-1] // the last cell read
	_ = ar[n-1]
	max2x2s(n, &x32[top], &x32[top+w], &y[0], &ar[0], base+top, w)
	return n
}
