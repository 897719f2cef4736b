#include "textflag.h"
#include "zmm24_amd64.h"

// AVX-512F narrow micro-kernels: 24 rows × one zmm vector of C (24×16
// float32, 24×8 float64) in Z8-Z31 for the whole K loop, for products at
// most one vector wide (the 16-channel convolutions of a ResNet), where
// the 12×32 kernel would compute half padding. Each step loads one B row
// into Z0, broadcasts the 24 A elements of the column in turn (rotating
// over Z2-Z7) and issues 24 independent FMAs.
//
// Arguments as for the other kernels (microKernel in kernel.go). The 24 A
// rows are addressed from five bases five rows apart, SI (row 0), R11 (5),
// R13 (10), R14 (15) and BX (20), each reaching its own row and the four
// after it with R10 = rsA bytes or AX = 3·rsA bytes as the scaled index;
// all five step csA per k.

// NFMA adds (broadcast A element at addr) × (B row in Z0) into acc.
#define NFMA(bcast, fma, addr, t, acc) \
	bcast addr, t; \
	fma   Z0, t, acc

// NFIVE is the FMAs of the five rows from base r on.
#define NFIVE(bcast, fma, r, a0, a1, a2, a3, a4) \
	NFMA(bcast, fma, (r), Z2, a0); \
	NFMA(bcast, fma, (r)(R10*1), Z3, a1); \
	NFMA(bcast, fma, (r)(R10*2), Z4, a2); \
	NFMA(bcast, fma, (r)(AX*1), Z5, a3); \
	NFMA(bcast, fma, (r)(R10*4), Z6, a4)

// NSTEP is one k step: the B row, then the 24 rows' FMAs (the last base
// reaches four rows).
#define NSTEP(movu, bcast, fma) \
	movu (DI), Z0; \
	NFIVE(bcast, fma, SI, Z8, Z9, Z10, Z11, Z12); \
	NFIVE(bcast, fma, R11, Z13, Z14, Z15, Z16, Z17); \
	NFIVE(bcast, fma, R13, Z18, Z19, Z20, Z21, Z22); \
	NFIVE(bcast, fma, R14, Z23, Z24, Z25, Z26, Z27); \
	NFMA(bcast, fma, (BX), Z7, Z28); \
	NFMA(bcast, fma, (BX)(R10*1), Z2, Z29); \
	NFMA(bcast, fma, (BX)(R10*2), Z3, Z30); \
	NFMA(bcast, fma, (BX)(AX*1), Z4, Z31); \
	ADDQ R12, SI; \
	ADDQ R12, R11; \
	ADDQ R12, R13; \
	ADDQ R12, R14; \
	ADDQ R12, BX; \
	ADDQ R8, DI

// NLOADARGS loads the pointers, turns the strides into bytes (shift by
// log2 of the element size) and sets up the row bases and AX = 3·rsA.
#define NLOADARGS(shift) \
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
	LEAQ (R10)(R10*2), AX; \
	LEAQ (SI)(R10*4), R11; \
	ADDQ R10, R11; \
	LEAQ (R11)(R10*4), R13; \
	ADDQ R10, R13; \
	LEAQ (R13)(R10*4), R14; \
	ADDQ R10, R14; \
	LEAQ (R14)(R10*4), BX; \
	ADDQ R10, BX

// NADDC stores alpha*acc (already scaled) + beta (Z1) × C into one row of
// C at DX, then moves DX to the next row; NPUTC stores acc without reading
// C (beta == 0).
#define NADDC(fma, mov, acc) \
	fma  (DX), Z1, acc; \
	mov  acc, (DX); \
	ADDQ R9, DX

#define NPUTC(mov, acc) \
	mov  acc, (DX); \
	ADDQ R9, DX

// NROWS applies op (NADDC or NPUTC with its instructions) to the 24 rows.
#define NROWS(op, i0, i1) \
	op(i0, i1, Z8); \
	op(i0, i1, Z9); \
	op(i0, i1, Z10); \
	op(i0, i1, Z11); \
	op(i0, i1, Z12); \
	op(i0, i1, Z13); \
	op(i0, i1, Z14); \
	op(i0, i1, Z15); \
	op(i0, i1, Z16); \
	op(i0, i1, Z17); \
	op(i0, i1, Z18); \
	op(i0, i1, Z19); \
	op(i0, i1, Z20); \
	op(i0, i1, Z21); \
	op(i0, i1, Z22); \
	op(i0, i1, Z23); \
	op(i0, i1, Z24); \
	op(i0, i1, Z25); \
	op(i0, i1, Z26); \
	op(i0, i1, Z27); \
	op(i0, i1, Z28); \
	op(i0, i1, Z29); \
	op(i0, i1, Z30); \
	op(i0, i1, Z31)

#define NPUT2(mov, unused, acc) NPUTC(mov, acc)

// func sgemmNarrowAVX512(k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, alpha, beta float32)
TEXT ·sgemmNarrowAVX512(SB), NOSPLIT, $0-72
	NLOADARGS(2)
	TILE24(VPXORD, NSTEP(VMOVUPS, VBROADCASTSS, VFMADD231PS), VBROADCASTSS, VMULPS, MOVL, SHLL, alpha+64(FP), beta+68(FP), NROWS(NADDC, VFMADD231PS, VMOVUPS), NROWS(NPUT2, VMOVUPS, 0))

// func dgemmNarrowAVX512(k int, a *float64, rsA, csA int, b *float64, rsB int, c *float64, ldc int, alpha, beta float64)
TEXT ·dgemmNarrowAVX512(SB), NOSPLIT, $0-80
	NLOADARGS(3)
	TILE24(VPXORQ, NSTEP(VMOVUPD, VBROADCASTSD, VFMADD231PD), VBROADCASTSD, VMULPD, MOVQ, SHLQ, alpha+64(FP), beta+72(FP), NROWS(NADDC, VFMADD231PD, VMOVUPD), NROWS(NPUT2, VMOVUPD, 0))
