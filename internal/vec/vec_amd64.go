package vec

import "golang.org/x/sys/cpu"

// hasAVX reports whether the assembly loops can run (cpu.X86.HasAVX
// includes the OS saving the ymm registers).
var hasAVX = cpu.X86.HasAVX

// add32 sets n float32 values at dst to the sums of those at a and b (dst
// may be a); n is a multiple of 8.
//
//go:noescape
func add32(dst, a, b *float32, n int)

// addConst32 adds v to n float32 values at dst; n is a multiple of 8.
//
//go:noescape
func addConst32(dst *float32, v float32, n int)

// addRows32 is AddRows for float32 (strides in elements).
//
//go:noescape
func addRows32(dst *float32, ldd int, src *float32, lds int, rows, n int)

// copyRows32 is CopyRows for float32 (strides in elements).
//
//go:noescape
func copyRows32(dst *float32, ldd int, src *float32, lds int, rows, n int)

// relu32 writes max(x, 0) for n float32 values (n a multiple of 8).
//
//go:noescape
func relu32(dst, x *float32, n int)

// reluGrad32 writes gr where x > 0, else 0, for n float32 values (n a
// multiple of 8).
//
//go:noescape
func reluGrad32(dst, gr, x *float32, n int)

// adam32 is Adam's loop for n float32 values (n a multiple of 8), with c
// holding lrT, b1, 1−b1, b2 and 1−b2.
//
//go:noescape
func adam32(p, grad, m, v *float32, n int, c *[5]float32, eps float32)

// max32 returns the largest of n float32 values, or NaN if any is NaN
// (n a multiple of 8, at least 8).
//
//go:noescape
func max32(x *float32, n int) float32

// adagrad32 is Adagrad's loop for n float32 values (n a multiple of 8).
//
//go:noescape
func adagrad32(p, grad, acc *float32, n int, lr, eps float32)

// tanhScoreGrad32 is TanhScoreGrad for n float32 values (n a multiple of 8).
//
//go:noescape
func tanhScoreGrad32(dv, dq, dk, t, v *float32, e float32, n int)

// axpy32 adds a·x into dst for n float32 values (n a multiple of 8).
//
//go:noescape
func axpy32(dst, x *float32, a float32, n int)

// dot32 returns the dot product of n float32 values (n a multiple of 8).
//
//go:noescape
func dot32(x, y *float32, n int) float32

// axpyRows32 is AxpyRows for float32 (strides in elements).
//
//go:noescape
func axpyRows32(dst *float32, ldd int, x *float32, ldx int, rows, n int, a float32)

// dotRows32 is DotRows for float32 (strides in elements).
//
//go:noescape
func dotRows32(x *float32, ldx int, y *float32, ldy int, rows, n int) float32

// indexAbove32 returns the first i < n, n a multiple of 8, with x[i] > t
// (never for NaN), or n.
//
//go:noescape
func indexAbove32(x *float32, n int, t float32) int

// subMul32 sets n float32 values at dst to p·(dst - d), the difference
// rounded before the product; n is a multiple of 8.
//
//go:noescape
func subMul32(dst, p *float32, d float32, n int)

// shift32 sets n float32 values at dst to (src + a) + b, each addition
// rounded in turn (dst may be src); n is a multiple of 8.
//
//go:noescape
func shift32(dst, src *float32, a, b float32, n int)
