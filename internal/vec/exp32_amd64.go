package vec

import "golang.org/x/sys/cpu"

// expShiftAVX2 writes exp(src - m) for src[0:n], n a multiple of 8, to
// dst[0:n] (dst may be src; nil: only the sum is wanted) by Exp32's
// method eight lanes at a time, and returns their sum, taken in float64
// (exp32_amd64.s).
//
//go:noescape
func expShiftAVX2(dst, src *float32, n int, m float32) float64

// expScaleAVX2 writes exp(src - m)·scale for src[0:n], n a multiple of
// 8, to dst[0:n] (dst may be src) by Exp32's method eight lanes at a
// time, the product rounded to float32 (exp32_amd64.s).
//
//go:noescape
func expScaleAVX2(dst, src *float32, n int, m, scale float32)

// hasExpAVX2 says whether this CPU runs expShiftAVX2.
var hasExpAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expShiftVec runs the vector kernel on the longest multiple-of-8 prefix
// of src (into dst, or only summed when dst is nil) and returns its length
// and sum; the caller does the rest.
func expShiftVec(dst, src []float32, m float32) (int, float64) {
	n := len(src) &^ 7
	if !hasExpAVX2 || n == 0 {
		return 0, 0
	}
	var d *float32
	if dst != nil {
		d = &dst[:n][0]
	}
	return n, expShiftAVX2(d, &src[0], n, m)
}

// expScaleVec runs expScaleAVX2 on the longest multiple-of-8 prefix of
// src and returns its length; the caller does the rest.
func expScaleVec(dst, src []float32, m, scale float32) int {
	n := len(src) &^ 7
	if !hasExpAVX2 || n == 0 {
		return 0
	}
	expScaleAVX2(&dst[:n][0], &src[0], n, m, scale)
	return n
}
