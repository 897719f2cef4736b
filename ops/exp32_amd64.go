package ops

import "golang.org/x/sys/cpu"

// expShiftAVX2 overwrites x[0:n], n a multiple of 8, with exp(x - m) by
// expf32's method eight lanes at a time, and returns their sum, taken in
// float64 (exp32_amd64.s).
//
//go:noescape
func expShiftAVX2(x *float32, n int, m float32) float64

// haveExpAVX2 says whether this CPU runs expShiftAVX2.
var haveExpAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expShiftVec runs the vector kernel on the longest multiple-of-8 prefix
// of x and returns its length and sum; the caller does the rest.
func expShiftVec(x []float32, m float32) (int, float64) {
	n := len(x) &^ 7
	if !haveExpAVX2 || n == 0 {
		return 0, 0
	}
	return n, expShiftAVX2(&x[0], n, m)
}
