package infer

import "golang.org/x/sys/cpu"

//go:noescape
func dynRangeAVX2(x *float32, n int, acc *[24]float32)

//go:noescape
func dynQuantizeAVX2(x *float32, n int, scale, zero float32, q *uint8)

// dynAVX2 says whether the CPU (and its OS's saving of the ymm
// registers) has AVX2 for dynquant_amd64.s.
var dynAVX2 = cpu.X86.HasAVX2

// dynRangeFast scans the multiple-of-8 head of x with AVX2 (VMINPS,
// VMAXPS, and VCMPPS unordered for NaN) and returns how many elements
// it scanned, with their min(0, ·), max(0, ·) and whether one was NaN.
func dynRangeFast(x []float32) (done int, lo, hi float32, nan bool) {
	n := len(x) &^ 7
	if !dynAVX2 || n == 0 {
		return 0, 0, 0, false
	}
	var acc [24]float32
	dynRangeAVX2(&x[0], n, &acc)
	for i := range 8 {
		lo, hi = min(lo, acc[i]), max(hi, acc[8+i])
		nan = nan || acc[16+i] != 0
	}
	return n, lo, hi, nan
}

// dynQuantizeFast quantizes the multiple-of-8 head of x with AVX2
// (VDIVPS, VROUNDPS to nearest even, the saturating packs) and returns
// how many elements it wrote.
func dynQuantizeFast(x []float32, scale float32, zero uint8, q []uint8) int {
	n := len(x) &^ 7
	if !dynAVX2 || n == 0 {
		return 0
	}
	_ = q[n-1]
	dynQuantizeAVX2(&x[0], n, scale, float32(zero), &q[0])
	return n
}
