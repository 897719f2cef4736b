#include "textflag.h"

// func add32(dst, a, b *float32, n int)
// dst[i] = a[i] + b[i] for i < n, n a multiple of 8 (dst may be a): 32
// values per round in four ymm registers, then 8 at a time.
TEXT ·add32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), DX
	MOVQ b+16(FP), SI
	MOVQ n+24(FP), CX

wide:
	CMPQ    CX, $32
	JLT     narrow
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VADDPS  64(DX), Y2, Y2
	VADDPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     wide

narrow:
	TESTQ   CX, CX
	JEQ     done
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     narrow

done:
	VZEROUPPER
	RET

// func addConst32(dst *float32, v float32, n int)
// dst[i] += v for i < n, n a multiple of 8.
TEXT ·addConst32(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	VBROADCASTSS v+8(FP), Y4
	MOVQ         n+16(FP), CX

wide:
	CMPQ    CX, $32
	JLT     narrow
	VADDPS  (DI), Y4, Y0
	VADDPS  32(DI), Y4, Y1
	VADDPS  64(DI), Y4, Y2
	VADDPS  96(DI), Y4, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     wide

narrow:
	TESTQ   CX, CX
	JEQ     done
	VADDPS  (DI), Y4, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     narrow

done:
	VZEROUPPER
	RET

// func addRows32(dst *float32, ldd int, src *float32, lds int, rows, n int)
// Row by row: 8 values at a time with AVX, the last n mod 8 one by one.
TEXT ·addRows32(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	SHLQ $2, R9
	MOVQ rows+32(FP), DX
	MOVQ n+40(FP), BX

arow:
	MOVQ DI, R10
	MOVQ SI, R11
	MOVQ BX, CX

avec:
	CMPQ    CX, $8
	JLT     atail
	VMOVUPS (R11), Y0
	VADDPS  (R10), Y0, Y0
	VMOVUPS Y0, (R10)
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JMP     avec

atail:
	TESTQ  CX, CX
	JEQ    anext
	VMOVSS (R11), X0
	VADDSS (R10), X0, X0
	VMOVSS X0, (R10)
	ADDQ   $4, R10
	ADDQ   $4, R11
	DECQ   CX
	JMP    atail

anext:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE  arow
	VZEROUPPER
	RET

// func copyRows32(dst *float32, ldd int, src *float32, lds int, rows, n int)
TEXT ·copyRows32(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	SHLQ $2, R9
	MOVQ rows+32(FP), DX
	MOVQ n+40(FP), BX

crow:
	MOVQ DI, R10
	MOVQ SI, R11
	MOVQ BX, CX

cvec:
	CMPQ    CX, $8
	JLT     ctail
	VMOVUPS (R11), Y0
	VMOVUPS Y0, (R10)
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JMP     cvec

ctail:
	TESTQ  CX, CX
	JEQ    cnext
	MOVL   (R11), AX
	MOVL   AX, (R10)
	ADDQ   $4, R10
	ADDQ   $4, R11
	DECQ   CX
	JMP    ctail

cnext:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE  crow
	VZEROUPPER
	RET

// func relu32(dst, x *float32, n int)
// VMAXPS returns its second source, x, when either is NaN, so NaN passes.
TEXT ·relu32(SB), NOSPLIT, $0-24
	MOVQ   dst+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPS Y7, Y7, Y7

rwide:
	CMPQ    CX, $32
	JLT     rnarrow
	VMAXPS  (SI), Y7, Y0
	VMAXPS  32(SI), Y7, Y1
	VMAXPS  64(SI), Y7, Y2
	VMAXPS  96(SI), Y7, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     rwide

rnarrow:
	TESTQ   CX, CX
	JEQ     rdone
	VMAXPS  (SI), Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     rnarrow

rdone:
	VZEROUPPER
	RET

// func reluGrad32(dst, gr, x *float32, n int)
// mask = x > 0 (ordered, so false for NaN), dst = mask AND gr.
TEXT ·reluGrad32(SB), NOSPLIT, $0-32
	MOVQ   dst+0(FP), DI
	MOVQ   gr+8(FP), DX
	MOVQ   x+16(FP), SI
	MOVQ   n+24(FP), CX
	VXORPS Y7, Y7, Y7

gloop:
	TESTQ   CX, CX
	JEQ     gdone
	VMOVUPS (SI), Y0
	VCMPPS  $0x1e, Y7, Y0, Y1
	VANDPS  (DX), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     gloop

gdone:
	VZEROUPPER
	RET

// func adam32(p, grad, m, v *float32, n int, c *[5]float32, eps float32)
// Eight values a time, each operation as Adam's Go loop orders it (no
// FMA, so every product and sum is rounded as there).
TEXT ·adam32(SB), NOSPLIT, $0-52
	MOVQ         p+0(FP), DI
	MOVQ         grad+8(FP), SI
	MOVQ         m+16(FP), R8
	MOVQ         v+24(FP), R9
	MOVQ         n+32(FP), CX
	MOVQ         c+40(FP), AX
	VBROADCASTSS 0(AX), Y10          // lrT
	VBROADCASTSS 4(AX), Y11          // b1
	VBROADCASTSS 8(AX), Y12          // 1-b1
	VBROADCASTSS 12(AX), Y13         // b2
	VBROADCASTSS 16(AX), Y14         // 1-b2
	VBROADCASTSS eps+48(FP), Y15

aloop:
	TESTQ   CX, CX
	JEQ     adone
	VMOVUPS (SI), Y0                 // g
	VMULPS  (R8), Y11, Y1            // b1*m
	VMULPS  Y0, Y12, Y2              // (1-b1)*g
	VADDPS  Y2, Y1, Y1               // m
	VMOVUPS Y1, (R8)
	VMULPS  (R9), Y13, Y3            // b2*v
	VMULPS  Y0, Y14, Y4              // (1-b2)*g
	VMULPS  Y0, Y4, Y4               // ·g
	VADDPS  Y4, Y3, Y3               // v
	VMOVUPS Y3, (R9)
	VSQRTPS Y3, Y3
	VADDPS  Y15, Y3, Y3              // sqrt(v) + eps
	VMULPS  Y1, Y10, Y1              // lrT*m
	VDIVPS  Y3, Y1, Y1               // / (sqrt(v) + eps)
	VMOVUPS (DI), Y5
	VSUBPS  Y1, Y5, Y5
	VMOVUPS Y5, (DI)
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     aloop

adone:
	VZEROUPPER
	RET

// func adagrad32(p, grad, acc *float32, n int, lr, eps float32)
// acc += g·g; p -= (lr·g) / sqrt(acc + eps), rounded as the Go loop.
TEXT ·adagrad32(SB), NOSPLIT, $0-40
	MOVQ         p+0(FP), DI
	MOVQ         grad+8(FP), SI
	MOVQ         acc+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSS lr+32(FP), Y14
	VBROADCASTSS eps+36(FP), Y15

gloop:
	TESTQ   CX, CX
	JEQ     gdone
	VMOVUPS (SI), Y0                 // g
	VMULPS  Y0, Y0, Y1               // g·g
	VADDPS  (R8), Y1, Y1             // acc
	VMOVUPS Y1, (R8)
	VADDPS  Y15, Y1, Y1              // acc + eps
	VSQRTPS Y1, Y1
	VMULPS  Y0, Y14, Y2              // lr·g
	VDIVPS  Y1, Y2, Y2
	VMOVUPS (DI), Y3
	VSUBPS  Y2, Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     gloop

gdone:
	VZEROUPPER
	RET

// func axpy32(dst, x *float32, a float32, n int)
// Multiply, then add (no FMA), as the Go loop rounds.
TEXT ·axpy32(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS a+16(FP), Y7
	MOVQ         n+24(FP), CX

xwide:
	CMPQ    CX, $32
	JLT     xnarrow
	VMULPS  (SI), Y7, Y0
	VMULPS  32(SI), Y7, Y1
	VMULPS  64(SI), Y7, Y2
	VMULPS  96(SI), Y7, Y3
	VADDPS  (DI), Y0, Y0
	VADDPS  32(DI), Y1, Y1
	VADDPS  64(DI), Y2, Y2
	VADDPS  96(DI), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     xwide

xnarrow:
	TESTQ   CX, CX
	JEQ     xdone
	VMULPS  (SI), Y7, Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     xnarrow

xdone:
	VZEROUPPER
	RET

// func dot32(x, y *float32, n int) float32
// Eight lanes of running sums (multiply, then add), added pairwise at
// the end: lanes 0-3 to 4-7, then the halves, then the last two.
TEXT ·dot32(SB), NOSPLIT, $0-28
	MOVQ   x+0(FP), SI
	MOVQ   y+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0

dloop:
	TESTQ   CX, CX
	JEQ     dsum
	VMOVUPS (SI), Y1
	VMULPS  (DI), Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     dloop

dsum:
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET

// func axpyRows32(dst *float32, ldd int, x *float32, ldx int, rows, n int, a float32)
// Row by row: 8 values at a time, multiply then add, the last n mod 8 one
// by one.
TEXT ·axpyRows32(SB), NOSPLIT, $0-52
	MOVQ         dst+0(FP), DI
	MOVQ         ldd+8(FP), R8
	SHLQ         $2, R8
	MOVQ         x+16(FP), SI
	MOVQ         ldx+24(FP), R9
	SHLQ         $2, R9
	MOVQ         rows+32(FP), DX
	MOVQ         n+40(FP), BX
	VBROADCASTSS a+48(FP), Y7

yrow:
	MOVQ DI, R10
	MOVQ SI, R11
	MOVQ BX, CX

yvec:
	CMPQ    CX, $8
	JLT     ytail
	VMULPS  (R11), Y7, Y0
	VADDPS  (R10), Y0, Y0
	VMOVUPS Y0, (R10)
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JMP     yvec

ytail:
	TESTQ  CX, CX
	JEQ    ynext
	VMOVSS (R11), X0
	VMULSS X7, X0, X0
	VADDSS (R10), X0, X0
	VMOVSS X0, (R10)
	ADDQ   $4, R10
	ADDQ   $4, R11
	DECQ   CX
	JMP    ytail

ynext:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE  yrow
	VZEROUPPER
	RET

// func dotRows32(x *float32, ldx int, y *float32, ldy int, rows, n int) float32
// Y0 holds eight running sums of the rows' 8-value blocks, X2 the sum of
// their last n mod 8 products; at the end the lanes are added pairwise
// and X2 last.
TEXT ·dotRows32(SB), NOSPLIT, $0-52
	MOVQ   x+0(FP), SI
	MOVQ   ldx+8(FP), R8
	SHLQ   $2, R8
	MOVQ   y+16(FP), DI
	MOVQ   ldy+24(FP), R9
	SHLQ   $2, R9
	MOVQ   rows+32(FP), DX
	MOVQ   n+40(FP), BX
	VXORPS Y0, Y0, Y0
	VXORPS X2, X2, X2

drow:
	MOVQ SI, R10
	MOVQ DI, R11
	MOVQ BX, CX

dvec:
	CMPQ    CX, $8
	JLT     dtail
	VMOVUPS (R10), Y1
	VMULPS  (R11), Y1, Y1
	VADDPS  Y1, Y0, Y0
	ADDQ    $32, R10
	ADDQ    $32, R11
	SUBQ    $8, CX
	JMP     dvec

dtail:
	TESTQ  CX, CX
	JEQ    dnext
	VMOVSS (R10), X1
	VMULSS (R11), X1, X1
	VADDSS X1, X2, X2
	ADDQ   $4, R10
	ADDQ   $4, R11
	DECQ   CX
	JMP    dtail

dnext:
	ADDQ R8, SI
	ADDQ R9, DI
	DECQ DX
	JNE  drow
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VADDSS       X2, X0, X0
	VMOVSS       X0, ret+48(FP)
	VZEROUPPER
	RET

// func max32(x *float32, n int) float32
// The largest of n float32 values (n a multiple of 8, at least 8), or NaN
// if any is NaN: eight running maxima, and an unordered-compare mask that
// remembers a NaN (VMAXPS alone would drop one already taken in).
TEXT ·max32(SB), NOSPLIT, $0-20
	MOVQ      x+0(FP), SI
	MOVQ      n+8(FP), CX
	VMOVUPS   (SI), Y0
	VCMPPS    $3, Y0, Y0, Y4 // lanes that are NaN
	ADDQ      $32, SI
	SUBQ      $8, CX

mloop:
	TESTQ     CX, CX
	JEQ       mreduce
	VMOVUPS   (SI), Y1
	VCMPPS    $3, Y1, Y1, Y2
	VORPS     Y2, Y4, Y4
	VMAXPS    Y1, Y0, Y0
	ADDQ      $32, SI
	SUBQ      $8, CX
	JMP       mloop

mreduce:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS    X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS    X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS    X1, X0, X0
	VMOVMSKPS Y4, AX
	TESTL     AX, AX
	JEQ       mdone
	MOVL      $0x7fc00000, AX // a NaN went through: return NaN
	MOVL      AX, X0

mdone:
	VZEROUPPER
	MOVSS     X0, ret+16(FP)
	RET

// func indexAbove32(x *float32, n int, t float32) int
// The first i < n (n a multiple of 8) with x[i] > t (an ordered compare:
// NaN is never above), or n: eight lanes compared at a time.
TEXT ·indexAbove32(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS t+16(FP), Y1
	XORQ         AX, AX

aloop:
	CMPQ      AX, CX
	JGE       anone
	VMOVUPS   (SI)(AX*4), Y0
	VCMPPS    $0x1e, Y1, Y0, Y2 // x > t, ordered, quiet
	VMOVMSKPS Y2, BX
	TESTL     BX, BX
	JNE       afound
	ADDQ      $8, AX
	JMP       aloop

afound:
	BSFL      BX, BX
	ADDQ      BX, AX
	VZEROUPPER
	MOVQ      AX, ret+24(FP)
	RET

anone:
	VZEROUPPER
	MOVQ      CX, ret+24(FP)
	RET

// func shift32(dst, src *float32, a, b float32, n int)
// dst[i] = (src[i] + a) + b for i < n, n a multiple of 8, each addition
// rounded in turn (dst may be src).
TEXT ·shift32(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	VBROADCASTSS a+16(FP), Y4
	VBROADCASTSS b+20(FP), Y5
	MOVQ         n+24(FP), CX

sloop:
	TESTQ   CX, CX
	JEQ     sdone
	VADDPS  (SI), Y4, Y0
	VADDPS  Y5, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     sloop

sdone:
	VZEROUPPER
	RET

// func subMul32(dst, p *float32, d float32, n int)
// dst[i] = p[i]·(dst[i] - d) for i < n, n a multiple of 8, the difference
// rounded before the product.
TEXT ·subMul32(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         p+8(FP), SI
	VBROADCASTSS d+16(FP), Y4
	MOVQ         n+24(FP), CX

mloop:
	TESTQ   CX, CX
	JEQ     mdone
	VMOVUPS (DI), Y0
	VSUBPS  Y4, Y0, Y0
	VMULPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     mloop

mdone:
	VZEROUPPER
	RET

// func tanhScoreGrad32(dv, dq, dk, t, v *float32, e float32, n int)
// Per lane: dv += e·t; g = (e·v)·(1 − t·t); dq += g; dk += g, each
// operation rounded in turn (no FMA), as the Go loop rounds.
TEXT ·tanhScoreGrad32(SB), NOSPLIT, $0-56
	MOVQ         dv+0(FP), DI
	MOVQ         dq+8(FP), R8
	MOVQ         dk+16(FP), R9
	MOVQ         t+24(FP), SI
	MOVQ         v+32(FP), DX
	VBROADCASTSS e+40(FP), Y7
	MOVQ         n+48(FP), CX
	MOVL         $0x3f800000, AX
	MOVL         AX, X6
	VSHUFPS      $0, X6, X6, X6 // 1.0 in every lane (AVX only: no register broadcast)
	VINSERTF128  $1, X6, Y6, Y6

tsloop:
	TESTQ   CX, CX
	JEQ     tsdone
	VMOVUPS (SI), Y0
	VMULPS  Y0, Y7, Y1
	VADDPS  (DI), Y1, Y1
	VMOVUPS Y1, (DI)
	VMULPS  Y0, Y0, Y2
	VSUBPS  Y2, Y6, Y2
	VMULPS  (DX), Y7, Y3
	VMULPS  Y2, Y3, Y3
	VADDPS  (R8), Y3, Y4
	VMOVUPS Y4, (R8)
	VADDPS  (R9), Y3, Y5
	VMOVUPS Y5, (R9)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $32, R9
	SUBQ    $8, CX
	JMP     tsloop

tsdone:
	VZEROUPPER
	RET
