#include "textflag.h"

// AVX2+FMA micro-kernels, the Haswell-class register tile of BLIS and
// GotoBLAS: 6 rows × two ymm vectors of C stay in Y4-Y15 for the whole K
// loop; each step loads one B row into Y0:Y1, broadcasts the 6 A elements
// of the column in turn (alternating Y2/Y3 so the broadcasts overlap) and
// issues 12 independent FMAs, enough to cover the FMA latency on both pipes.
//
// Arguments (microKernel in kernel.go): k, a, rsA, csA, b, rsB, c, ldc,
// alpha, beta; strides in elements. A rows 0-2 are addressed from SI and
// rows 3-5 from R11 = SI + 3*rsA, both stepping csA per k.

// FMA6 adds (broadcast A element at addr) × (B row in Y0:Y1) into acc0:acc1.
#define FMA6(bcast, fma, addr, t, acc0, acc1) \
	bcast addr, t; \
	fma   Y0, t, acc0; \
	fma   Y1, t, acc1

// ADDC stores alpha*acc (already scaled) + beta (Y1) × C into one row of C at
// DX, then moves DX to the next row.
#define ADDC(fma, mov, acc0, acc1) \
	fma  (DX), Y1, acc0; \
	fma  32(DX), Y1, acc1; \
	mov  acc0, (DX); \
	mov  acc1, 32(DX); \
	ADDQ R9, DX

// PUTC stores acc into one row of C at DX without reading C (beta == 0).
#define PUTC(mov, acc0, acc1) \
	mov  acc0, (DX); \
	mov  acc1, 32(DX); \
	ADDQ R9, DX

// LOADARGS loads the pointers and turns the strides into bytes (shift by
// log2 of the element size).
#define LOADARGS(shift) \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ rsA+16(FP), R10; \
	SHLQ $shift, R10; \
	MOVQ csA+24(FP), R12; \
	SHLQ $shift, R12; \
	MOVQ b+32(FP), DI; \
	MOVQ rsB+40(FP), R8; \
	SHLQ $shift, R8; \
	MOVQ c+48(FP), DX; \
	MOVQ ldc+56(FP), R9; \
	SHLQ $shift, R9; \
	LEAQ (SI)(R10*2), R11; \
	ADDQ R10, R11

// STEP6 is one k step: load the B row, 12 FMAs, advance A and B.
#define STEP6(movu, bcast, fma) \
	movu (DI), Y0; \
	movu 32(DI), Y1; \
	FMA6(bcast, fma, (SI), Y2, Y4, Y5); \
	FMA6(bcast, fma, (SI)(R10*1), Y3, Y6, Y7); \
	FMA6(bcast, fma, (SI)(R10*2), Y2, Y8, Y9); \
	FMA6(bcast, fma, (R11), Y3, Y10, Y11); \
	FMA6(bcast, fma, (R11)(R10*1), Y2, Y12, Y13); \
	FMA6(bcast, fma, (R11)(R10*2), Y3, Y14, Y15); \
	ADDQ R12, SI; \
	ADDQ R12, R11; \
	ADDQ R8, DI

// LOOP6 runs the k steps four at a time (less loop overhead per FMA), then
// the remaining k % 4.
#define LOOP6(movu, bcast, fma) \
	MOVQ CX, BX; \
	SHRQ $2, BX; \
	ANDQ $3, CX; \
	TESTQ BX, BX; \
	JEQ tail; \
loop4: \
	STEP6(movu, bcast, fma); \
	STEP6(movu, bcast, fma); \
	STEP6(movu, bcast, fma); \
	STEP6(movu, bcast, fma); \
	DECQ BX; \
	JNE loop4; \
tail: \
	TESTQ CX, CX; \
	JEQ scale; \
loop1: \
	STEP6(movu, bcast, fma); \
	DECQ CX; \
	JNE loop1

// func sgemmAVX2(k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, alpha, beta float32)
TEXT ·sgemmAVX2(SB), NOSPLIT, $0-72
	LOADARGS(2)
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	LOOP6(VMOVUPS, VBROADCASTSS, VFMADD231PS)

scale:
	VBROADCASTSS alpha+64(FP), Y0
	VMULPS       Y0, Y4, Y4
	VMULPS       Y0, Y5, Y5
	VMULPS       Y0, Y6, Y6
	VMULPS       Y0, Y7, Y7
	VMULPS       Y0, Y8, Y8
	VMULPS       Y0, Y9, Y9
	VMULPS       Y0, Y10, Y10
	VMULPS       Y0, Y11, Y11
	VMULPS       Y0, Y12, Y12
	VMULPS       Y0, Y13, Y13
	VMULPS       Y0, Y14, Y14
	VMULPS       Y0, Y15, Y15
	MOVL         beta+68(FP), AX
	SHLL         $1, AX                // drop the sign bit: -0 counts as 0
	JEQ          overwrite
	VBROADCASTSS beta+68(FP), Y1
	ADDC(VFMADD231PS, VMOVUPS, Y4, Y5)
	ADDC(VFMADD231PS, VMOVUPS, Y6, Y7)
	ADDC(VFMADD231PS, VMOVUPS, Y8, Y9)
	ADDC(VFMADD231PS, VMOVUPS, Y10, Y11)
	ADDC(VFMADD231PS, VMOVUPS, Y12, Y13)
	ADDC(VFMADD231PS, VMOVUPS, Y14, Y15)
	VZEROUPPER
	RET

overwrite:
	PUTC(VMOVUPS, Y4, Y5)
	PUTC(VMOVUPS, Y6, Y7)
	PUTC(VMOVUPS, Y8, Y9)
	PUTC(VMOVUPS, Y10, Y11)
	PUTC(VMOVUPS, Y12, Y13)
	PUTC(VMOVUPS, Y14, Y15)
	VZEROUPPER
	RET

// func dgemmAVX2(k int, a *float64, rsA, csA int, b *float64, rsB int, c *float64, ldc int, alpha, beta float64)
TEXT ·dgemmAVX2(SB), NOSPLIT, $0-80
	LOADARGS(3)
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15
	LOOP6(VMOVUPD, VBROADCASTSD, VFMADD231PD)

scale:
	VBROADCASTSD alpha+64(FP), Y0
	VMULPD       Y0, Y4, Y4
	VMULPD       Y0, Y5, Y5
	VMULPD       Y0, Y6, Y6
	VMULPD       Y0, Y7, Y7
	VMULPD       Y0, Y8, Y8
	VMULPD       Y0, Y9, Y9
	VMULPD       Y0, Y10, Y10
	VMULPD       Y0, Y11, Y11
	VMULPD       Y0, Y12, Y12
	VMULPD       Y0, Y13, Y13
	VMULPD       Y0, Y14, Y14
	VMULPD       Y0, Y15, Y15
	MOVQ         beta+72(FP), AX
	SHLQ         $1, AX                // drop the sign bit: -0 counts as 0
	JEQ          overwrite
	VBROADCASTSD beta+72(FP), Y1
	ADDC(VFMADD231PD, VMOVUPD, Y4, Y5)
	ADDC(VFMADD231PD, VMOVUPD, Y6, Y7)
	ADDC(VFMADD231PD, VMOVUPD, Y8, Y9)
	ADDC(VFMADD231PD, VMOVUPD, Y10, Y11)
	ADDC(VFMADD231PD, VMOVUPD, Y12, Y13)
	ADDC(VFMADD231PD, VMOVUPD, Y14, Y15)
	VZEROUPPER
	RET

overwrite:
	PUTC(VMOVUPD, Y4, Y5)
	PUTC(VMOVUPD, Y6, Y7)
	PUTC(VMOVUPD, Y8, Y9)
	PUTC(VMOVUPD, Y10, Y11)
	PUTC(VMOVUPD, Y12, Y13)
	PUTC(VMOVUPD, Y14, Y15)
	VZEROUPPER
	RET
