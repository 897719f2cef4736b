#include "textflag.h"
#include "zmm24_amd64.h"

// AVX-512F micro-kernels: 12 rows × two zmm vectors of C (12×32 float32,
// 12×16 float64) stay in Z8-Z31 for the whole K loop; each step loads one
// B row into Z0:Z1, broadcasts the 12 A elements of the column in turn
// (alternating Z2/Z3) and issues 24 independent FMAs.
//
// Arguments as for the AVX2 kernels (microKernel in kernel.go). The 12 A
// rows are addressed from four bases, SI (rows 0, 1, 2, 4, 8), R11 = row 3
// (3, 5, 7, 11), R13 = row 6 (6, 10) and R14 = row 9, with R10 = rsA bytes
// as the scaled index; all four step csA per k.

// FMA12 adds (broadcast A element at addr) × (B row in Z0:Z1) into acc0:acc1.
#define FMA12(bcast, fma, addr, t, acc0, acc1) \
	bcast addr, t; \
	fma   Z0, t, acc0; \
	fma   Z1, t, acc1

// ADDC stores alpha*acc (already scaled) + beta (Z1) × C into one row of C at
// DX, then moves DX to the next row.
#define ADDC(fma, mov, acc0, acc1) \
	fma  (DX), Z1, acc0; \
	fma  64(DX), Z1, acc1; \
	mov  acc0, (DX); \
	mov  acc1, 64(DX); \
	ADDQ R9, DX

// PUTC stores acc into one row of C at DX without reading C (beta == 0).
#define PUTC(mov, acc0, acc1) \
	mov  acc0, (DX); \
	mov  acc1, 64(DX); \
	ADDQ R9, DX

// LOADARGS loads the pointers, turns the strides into bytes (shift by log2
// of the element size) and sets up the row bases.
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
	ADDQ R10, R11; \
	LEAQ (R11)(R10*2), R13; \
	ADDQ R10, R13; \
	LEAQ (R13)(R10*2), R14; \
	ADDQ R10, R14

// STEP12 is one k step: B row, then the 12 rows' FMAs.
#define STEP12(movu, bcast, fma) \
	movu (DI), Z0; \
	movu 64(DI), Z1; \
	FMA12(bcast, fma, (SI), Z2, Z8, Z9); \
	FMA12(bcast, fma, (SI)(R10*1), Z3, Z10, Z11); \
	FMA12(bcast, fma, (SI)(R10*2), Z2, Z12, Z13); \
	FMA12(bcast, fma, (R11), Z3, Z14, Z15); \
	FMA12(bcast, fma, (SI)(R10*4), Z2, Z16, Z17); \
	FMA12(bcast, fma, (R11)(R10*2), Z3, Z18, Z19); \
	FMA12(bcast, fma, (R13), Z2, Z20, Z21); \
	FMA12(bcast, fma, (R11)(R10*4), Z3, Z22, Z23); \
	FMA12(bcast, fma, (SI)(R10*8), Z2, Z24, Z25); \
	FMA12(bcast, fma, (R14), Z3, Z26, Z27); \
	FMA12(bcast, fma, (R13)(R10*4), Z2, Z28, Z29); \
	FMA12(bcast, fma, (R11)(R10*8), Z3, Z30, Z31); \
	ADDQ R12, SI; \
	ADDQ R12, R11; \
	ADDQ R12, R13; \
	ADDQ R12, R14; \
	ADDQ R8, DI

// ADD12 and PUT12 write the 12 rows of C (see ADDC, PUTC).
#define ADD12(fma, mov) \
	ADDC(fma, mov, Z8, Z9); \
	ADDC(fma, mov, Z10, Z11); \
	ADDC(fma, mov, Z12, Z13); \
	ADDC(fma, mov, Z14, Z15); \
	ADDC(fma, mov, Z16, Z17); \
	ADDC(fma, mov, Z18, Z19); \
	ADDC(fma, mov, Z20, Z21); \
	ADDC(fma, mov, Z22, Z23); \
	ADDC(fma, mov, Z24, Z25); \
	ADDC(fma, mov, Z26, Z27); \
	ADDC(fma, mov, Z28, Z29); \
	ADDC(fma, mov, Z30, Z31)

#define PUT12(mov) \
	PUTC(mov, Z8, Z9); \
	PUTC(mov, Z10, Z11); \
	PUTC(mov, Z12, Z13); \
	PUTC(mov, Z14, Z15); \
	PUTC(mov, Z16, Z17); \
	PUTC(mov, Z18, Z19); \
	PUTC(mov, Z20, Z21); \
	PUTC(mov, Z22, Z23); \
	PUTC(mov, Z24, Z25); \
	PUTC(mov, Z26, Z27); \
	PUTC(mov, Z28, Z29); \
	PUTC(mov, Z30, Z31)

// func sgemmAVX512(k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, alpha, beta float32)
TEXT ·sgemmAVX512(SB), NOSPLIT, $0-72
	LOADARGS(2)
	TILE24(VPXORD, STEP12(VMOVUPS, VBROADCASTSS, VFMADD231PS), VBROADCASTSS, VMULPS, MOVL, SHLL, alpha+64(FP), beta+68(FP), ADD12(VFMADD231PS, VMOVUPS), PUT12(VMOVUPS))

// func dgemmAVX512(k int, a *float64, rsA, csA int, b *float64, rsB int, c *float64, ldc int, alpha, beta float64)
TEXT ·dgemmAVX512(SB), NOSPLIT, $0-80
	LOADARGS(3)
	TILE24(VPXORQ, STEP12(VMOVUPD, VBROADCASTSD, VFMADD231PD), VBROADCASTSD, VMULPD, MOVQ, SHLQ, alpha+64(FP), beta+72(FP), ADD12(VFMADD231PD, VMOVUPD), PUT12(VMOVUPD))
