package gemm

import "golang.org/x/sys/cpu"

// The assembly micro-kernels (kernel_avx2_amd64.s, kernel_avx512_amd64.s);
// each implements microKernel, see there for the arguments.

//go:noescape
func sgemmAVX2(k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func dgemmAVX2(k int, a *float64, rsA, csA int, b *float64, rsB int, c *float64, ldc int, alpha, beta float64)

//go:noescape
func sgemmAVX512(k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func dgemmAVX512(k int, a *float64, rsA, csA int, b *float64, rsB int, c *float64, ldc int, alpha, beta float64)

//go:noescape
func sgemmNarrowAVX512(k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, alpha, beta float32)

//go:noescape
func dgemmNarrowAVX512(k int, a *float64, rsA, csA int, b *float64, rsB int, c *float64, ldc int, alpha, beta float64)

// The AVX2 row kernels for m = 1 (gemv_avx2_amd64.s): y[0:w] gets
// Σ_p a[p*csA]·b[p*rsB + j], w = 64 or 16 float32, 32 or 8 float64 (256
// or 64 bytes of B per K step); the wide ones prefetch B pf rows ahead.

//go:noescape
func sgemvRow64AVX2(k int, a *float32, csA int, b *float32, rsB int, y *float32, pf int)

//go:noescape
func sgemvRow16AVX2(k int, a *float32, csA int, b *float32, rsB int, y *float32)

//go:noescape
func dgemvRow32AVX2(k int, a *float64, csA int, b *float64, rsB int, y *float64, pf int)

//go:noescape
func dgemvRow8AVX2(k int, a *float64, csA int, b *float64, rsB int, y *float64)

// rowPrefetch is how many rows ahead the wide row kernels prefetch B over
// k rows that lie stride bytes apart: 8, except where B is small enough
// to stay in L1 between calls (32 KiB or less: the prefetches would only
// take load slots) and where rows 1 KiB or more apart put every 8th row
// or closer into the same L1 sets (4 KiB apart, all of them), so that the
// lines prefetched evict each other before use.
func rowPrefetch(k, stride int) int {
	if k*stride <= 32<<10 || stride >= 1024 {
		return 0
	}
	return 8
}

// sgemvRowAVX2 is the AVX2 rowKernel for float32: 64-column runs, then
// 16-column runs, then the last few columns in Go.
func sgemvRowAVX2(k int, a []float32, csA int, b []float32, rsB int, y []float32) {
	j, pf := 0, rowPrefetch(k, rsB*4)
	for ; j+64 <= len(y); j += 64 {
		sgemvRow64AVX2(k, &a[0], csA, &b[j], rsB, &y[j], pf)
	}
	for ; j+16 <= len(y); j += 16 {
		sgemvRow16AVX2(k, &a[0], csA, &b[j], rsB, &y[j])
	}
	rowGo(k, a, csA, b[j:], rsB, y[j:])
}

// dgemvRowAVX2 is the AVX2 rowKernel for float64: 32-column runs, then
// 8-column runs, then the last few columns in Go.
func dgemvRowAVX2(k int, a []float64, csA int, b []float64, rsB int, y []float64) {
	j, pf := 0, rowPrefetch(k, rsB*8)
	for ; j+32 <= len(y); j += 32 {
		dgemvRow32AVX2(k, &a[0], csA, &b[j], rsB, &y[j], pf)
	}
	for ; j+8 <= len(y); j += 8 {
		dgemvRow8AVX2(k, &a[0], csA, &b[j], rsB, &y[j])
	}
	rowGo(k, a, csA, b[j:], rsB, y[j:])
}

// archConfigs offers the pure-Go kernel and the assembly ones this CPU (and
// its OS, which must save the wider registers) supports; choose (path.go)
// picks among them.
//
// AVX2+FMA: 6×16 float32 and 6×8 float64, the classic Haswell-class tile:
// 12 ymm accumulators cover the FMA latency × 2 pipes, two ymm hold the B
// row, one takes the A broadcast. KC = 256 keeps the KC×NR B panel
// (16 KiB) in a 32 KiB L1 with the streaming A strip; MC keeps an MC×KC A
// block (144-192 KiB) well inside L2; NC keeps the B slab (3-4 MiB) in L3.
//
// AVX-512F: 12×32 float32 and 12×16 float64, 24 zmm accumulators; KC = 192
// keeps its twice as wide B panel (24 KiB) in L1. A CPU with AVX-512F has
// AVX2, which the path borrows for its m = 1 products: they run on the
// AVX2 row kernels (a row product is bound by how fast B streams from
// cache, not by the width of the FMAs). Products at most one zmm vector
// wide (n <= 16 float32, 8 float64: the 16-channel convolutions of a
// ResNet, their weight gradients), where half of every 12×32 tile would be
// padding, run on the narrow AVX-512 kernels instead, 24×16 and 24×8: 24
// zmm accumulators again, one B vector per step; KC = 256 keeps their B
// panel (16 KiB) in L1 as the AVX2 tile's does, and MC = 144 is six strips.
// Products at most 6 rows tall (a beam search over one source, small
// batches of inference), where the 12-row tile would be half padding or
// more, run on the AVX2 kernels, whose 6-row tile computes none at 6
// rows.
func archConfigs() (c32 [numPaths]*config[float32], c64 [numPaths]*config[float64]) {
	c32[pathGo], c64[pathGo] = goConfig[float32](), goConfig[float64]()
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return c32, c64
	}
	c32[pathAVX2] = &config[float32]{name: "avx2", mr: 6, nr: 16, kc: 256, mc: 144, nc: 3072,
		packAMinN: 512, packBMinM: 96, packBMinStride: pageStride, kernel: sgemmAVX2, row: sgemvRowAVX2}
	c64[pathAVX2] = &config[float64]{name: "avx2", mr: 6, nr: 8, kc: 256, mc: 96, nc: 2048,
		packAMinN: 512, packBMinM: 24, packBMinStride: pageStride, kernel: dgemmAVX2, row: dgemvRowAVX2}
	if cpu.X86.HasAVX512F {
		c32[pathAVX512] = &config[float32]{name: "avx512", mr: 12, nr: 32, kc: 192, mc: 144, nc: 3072,
			packAMinN: 512, packBMinM: 24, packBMinStride: pageStride, kernel: sgemmAVX512, row: sgemvRowAVX2}
		c64[pathAVX512] = &config[float64]{name: "avx512", mr: 12, nr: 16, kc: 192, mc: 96, nc: 2048,
			packAMinN: 512, packBMinM: 24, packBMinStride: pageStride, kernel: dgemmAVX512, row: dgemvRowAVX2}
		c32[pathAVX512].narrow = &config[float32]{name: "avx512-narrow", mr: 24, nr: 16, kc: 256, mc: 144, nc: 3072,
			packAMinN: 512, packBMinM: 48, packBMinStride: pageStride, kernel: sgemmNarrowAVX512, row: sgemvRowAVX2}
		c64[pathAVX512].narrow = &config[float64]{name: "avx512-narrow", mr: 24, nr: 8, kc: 256, mc: 96, nc: 2048,
			packAMinN: 512, packBMinM: 48, packBMinStride: pageStride, kernel: dgemmNarrowAVX512, row: dgemvRowAVX2}
		c32[pathAVX512].short, c64[pathAVX512].short = c32[pathAVX2], c64[pathAVX2]
	}
	return c32, c64
}
