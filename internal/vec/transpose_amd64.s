#include "textflag.h"

// func transpose8s(blocks int, src *float32, lds int, dst *float32, ldd int, add bool)
//
// For blocks consecutive 8×8 blocks along a band of 8 rows of src (row
// stride lds elements), block b at columns 8b..8b+7, writes (or with add,
// adds) its transpose into rows 8b..8b+7 of dst (row stride ldd), columns
// 0..7. Each block: two rounds of unpacks pair the rows' elements into
// 2×2 and then 4×4 tiles within each 128-bit lane, and VPERM2F128 joins
// the lanes, so a block costs 8 loads, 24 shuffles and 8 stores.
TEXT ·transpose8s(SB), NOSPLIT, $0-41
	MOVQ   blocks+0(FP), CX
	MOVQ   src+8(FP), SI
	MOVQ   lds+16(FP), AX
	SHLQ   $2, AX             // src row stride in bytes
	MOVQ   dst+24(FP), DI
	MOVQ   ldd+32(FP), BX
	SHLQ   $2, BX             // dst row stride in bytes
	MOVBLZX add+40(FP), DX
	LEAQ   (AX)(AX*2), R8     // 3 src rows
	LEAQ   (BX)(BX*2), R9     // 3 dst rows
	TESTQ  CX, CX
	JEQ    done

block:
	LEAQ    (SI)(AX*4), R10   // src rows 4-7
	VMOVUPS (SI), Y0          // r0: a0..a7
	VMOVUPS (SI)(AX*1), Y1    // r1
	VMOVUPS (SI)(AX*2), Y2    // r2
	VMOVUPS (SI)(R8*1), Y3    // r3
	VMOVUPS (R10), Y4
	VMOVUPS (R10)(AX*1), Y5
	VMOVUPS (R10)(AX*2), Y6
	VMOVUPS (R10)(R8*1), Y7

	// 32-bit interleave of row pairs: (r0,r1) -> a0 b0 a1 b1 | a4 b4 a5 b5 ...
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	// 64-bit interleave of pair pairs: a0 b0 c0 d0 | a4 b4 c4 d4 ...
	VUNPCKLPD Y10, Y8, Y0
	VUNPCKHPD Y10, Y8, Y1
	VUNPCKLPD Y11, Y9, Y2
	VUNPCKHPD Y11, Y9, Y3
	VUNPCKLPD Y14, Y12, Y4
	VUNPCKHPD Y14, Y12, Y5
	VUNPCKLPD Y15, Y13, Y6
	VUNPCKHPD Y15, Y13, Y7

	// join lanes: column k = rows 0-3 of lane k/4 with rows 4-7.
	VPERM2F128 $0x20, Y4, Y0, Y8  // column 0
	VPERM2F128 $0x20, Y5, Y1, Y9  // column 1
	VPERM2F128 $0x20, Y6, Y2, Y10 // column 2
	VPERM2F128 $0x20, Y7, Y3, Y11 // column 3
	VPERM2F128 $0x31, Y4, Y0, Y12 // column 4
	VPERM2F128 $0x31, Y5, Y1, Y13 // column 5
	VPERM2F128 $0x31, Y6, Y2, Y14 // column 6
	VPERM2F128 $0x31, Y7, Y3, Y15 // column 7

	LEAQ (DI)(BX*4), R11 // dst rows 4-7
	TESTQ DX, DX
	JEQ   store
	VADDPS (DI), Y8, Y8
	VADDPS (DI)(BX*1), Y9, Y9
	VADDPS (DI)(BX*2), Y10, Y10
	VADDPS (DI)(R9*1), Y11, Y11
	VADDPS (R11), Y12, Y12
	VADDPS (R11)(BX*1), Y13, Y13
	VADDPS (R11)(BX*2), Y14, Y14
	VADDPS (R11)(R9*1), Y15, Y15

store:
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(BX*1)
	VMOVUPS Y10, (DI)(BX*2)
	VMOVUPS Y11, (DI)(R9*1)
	VMOVUPS Y12, (R11)
	VMOVUPS Y13, (R11)(BX*1)
	VMOVUPS Y14, (R11)(BX*2)
	VMOVUPS Y15, (R11)(R9*1)

	ADDQ $32, SI         // next 8 columns of src
	LEAQ (R11)(BX*4), DI // next 8 rows of dst
	DECQ CX
	JNE  block

done:
	VZEROUPPER
	RET
