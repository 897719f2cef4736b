#include "textflag.h"

// AVX2 u8×s8 kernels. Each K group of four steps: one 32-bit broadcast
// of a row's four A bytes (VPBROADCASTD), VPMADDUBSW against the B panel's
// 32 bytes (eight columns × four steps) gives sixteen 16-bit sums of two
// products each (exact: PackB keeps the weights in [-64, 63], doc.go),
// VPMADDWD with sixteen 16-bit ones adds those in pairs into eight 32-bit
// sums of four products, and VPADDD accumulates them. Go's operand order
// is reversed from Intel's: VPMADDUBSW Yb, Ya, Yd is Intel's
// vpmaddubsw yd, ya, yb, ya unsigned, yb signed.

// ONES16 sets Y15 to sixteen 16-bit ones, VPMADDWD's pair-adding operand.
#define ONES16 \
	MOVL         $0x00010001, AX; \
	MOVD         AX, X15; \
	VPBROADCASTD X15, Y15

// ROW adds one row's products for one K group into acc0 (columns 0-7) and
// acc1 (columns 8-15): the four A bytes at addr against B in Y0:Y1, with
// t0, t1 as scratch.
#define ROW(addr, t0, t1, acc0, acc1) \
	VPBROADCASTD addr, t1; \
	VPMADDUBSW   Y0, t1, t0; \
	VPMADDUBSW   Y1, t1, t1; \
	VPMADDWD     Y15, t0, t0; \
	VPMADDWD     Y15, t1, t1; \
	VPADDD       t0, acc0, acc0; \
	VPADDD       t1, acc1, acc1

// func tile4x16AVX2(kg int, a *uint8, rsA, gs int, b *int8, c *int32, ldc int)
// The 4×16 tile: eight accumulators Y4-Y11, B's group in Y0:Y1, the rows'
// broadcasts and products alternating between Y2:Y3 and Y12:Y13 so that
// consecutive rows do not wait on each other. Rows 0-2 of A are
// addressed from SI, row 3 from R11 = SI + 3·rsA; both advance gs bytes a
// group, B 64.
TEXT ·tile4x16AVX2(SB), NOSPLIT, $0-56
	MOVQ kg+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rsA+16(FP), R10
	MOVQ gs+24(FP), R12
	MOVQ b+32(FP), DI
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R10*2), R11
	ADDQ R10, R11
	ONES16
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11

loop:
	VMOVDQU (DI), Y0
	VMOVDQU 32(DI), Y1
	ROW((SI), Y2, Y3, Y4, Y5)
	ROW((SI)(R10*1), Y12, Y13, Y6, Y7)
	ROW((SI)(R10*2), Y2, Y3, Y8, Y9)
	ROW((R11), Y12, Y13, Y10, Y11)
	ADDQ R12, SI
	ADDQ R12, R11
	ADDQ $64, DI
	DECQ CX
	JNE  loop

	VMOVDQU Y4, (DX)
	VMOVDQU Y5, 32(DX)
	ADDQ    R9, DX
	VMOVDQU Y6, (DX)
	VMOVDQU Y7, 32(DX)
	ADDQ    R9, DX
	VMOVDQU Y8, (DX)
	VMOVDQU Y9, 32(DX)
	ADDQ    R9, DX
	VMOVDQU Y10, (DX)
	VMOVDQU Y11, 32(DX)
	VZEROUPPER
	RET

// func row16AVX2(kg int, a *uint8, stride int, b *int8, c *int32)
// One row by 16 columns: two K groups a trip into two accumulator pairs
// (Y4:Y5, Y6:Y7), summed at the end, so that the adds of consecutive
// groups do not wait on each other; an odd last group runs alone.
TEXT ·row16AVX2(SB), NOSPLIT, $0-40
	MOVQ kg+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	ONES16
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ  CX, BX
	SHRQ  $1, BX
	JEQ   odd

loop2:
	VMOVDQU (DI), Y0
	VMOVDQU 32(DI), Y1
	ROW((SI), Y2, Y3, Y4, Y5)
	VMOVDQU 64(DI), Y0
	VMOVDQU 96(DI), Y1
	ROW((SI)(R8*1), Y12, Y13, Y6, Y7)
	LEAQ    (SI)(R8*2), SI
	ADDQ    $128, DI
	DECQ    BX
	JNE     loop2

odd:
	ANDQ $1, CX
	JEQ  done
	VMOVDQU (DI), Y0
	VMOVDQU 32(DI), Y1
	ROW((SI), Y2, Y3, Y4, Y5)

done:
	VPADDD  Y6, Y4, Y4
	VPADDD  Y7, Y5, Y5
	VMOVDQU Y4, (DX)
	VMOVDQU Y5, 32(DX)
	VZEROUPPER
	RET

// func dequant8AVX2(groups int, acc, corr *int32, scale, bias, out *float32, relu bool)
// The float32 epilogue, eight columns a step: out = scale·float32(acc −
// corr) (+ bias where bias is not nil), then max(·, 0) with relu, which
// VMAXPS gives as Go's !(v > 0) does: 0 for NaN (the second source is
// returned when either is NaN). Multiply and add stay separate
// instructions, rounded each, as the Go loop computes them.
TEXT ·dequant8AVX2(SB), NOSPLIT, $0-49
	MOVQ   groups+0(FP), CX
	MOVQ   acc+8(FP), SI
	MOVQ   corr+16(FP), R8
	MOVQ   scale+24(FP), R9
	MOVQ   bias+32(FP), R10
	MOVQ   out+40(FP), DI
	MOVBLZX relu+48(FP), AX
	VXORPS Y15, Y15, Y15

dqloop:
	VMOVDQU   (SI), Y0
	VPSUBD    (R8), Y0, Y0
	VCVTDQ2PS Y0, Y0
	VMULPS    (R9), Y0, Y0
	TESTQ     R10, R10
	JEQ       dqnobias
	VADDPS    (R10), Y0, Y0
	ADDQ      $32, R10

dqnobias:
	TESTQ  AX, AX
	JEQ    dqstore
	VMAXPS Y15, Y0, Y0

dqstore:
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, DI
	DECQ    CX
	JNE     dqloop
	VZEROUPPER
	RET

// ROW8 is ROW for the panel's first eight columns only: B's half in Y0.
#define ROW8(addr, t0, acc0) \
	VPBROADCASTD addr, t0; \
	VPMADDUBSW   Y0, t0, t0; \
	VPMADDWD     Y15, t0, t0; \
	VPADDD       t0, acc0, acc0

// func tile4x8AVX2(kg int, a *uint8, rsA, gs int, b *int8, c *int32, ldc int)
// tile4x16AVX2 for a last panel whose columns 8-15 are padding: the
// first 32 bytes of each 64-byte group of B, four accumulators Y4-Y7,
// eight sums a row stored (the padding columns of c are not written).
TEXT ·tile4x8AVX2(SB), NOSPLIT, $0-56
	MOVQ kg+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rsA+16(FP), R10
	MOVQ gs+24(FP), R12
	MOVQ b+32(FP), DI
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R10*2), R11
	ADDQ R10, R11
	ONES16
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7

loop8:
	VMOVDQU (DI), Y0
	ROW8((SI), Y2, Y4)
	ROW8((SI)(R10*1), Y3, Y5)
	ROW8((SI)(R10*2), Y12, Y6)
	ROW8((R11), Y13, Y7)
	ADDQ R12, SI
	ADDQ R12, R11
	ADDQ $64, DI
	DECQ CX
	JNE  loop8

	VMOVDQU Y4, (DX)
	ADDQ    R9, DX
	VMOVDQU Y5, (DX)
	ADDQ    R9, DX
	VMOVDQU Y6, (DX)
	ADDQ    R9, DX
	VMOVDQU Y7, (DX)
	VZEROUPPER
	RET
