#include "textflag.h"

// Transposing copies for packing (pack.go): dst[p*w + j] = src[j*ld + p]
// for a group of 8 float32 (4 float64) rows j and p in whole blocks of 8
// (4). Each block is a register transpose: unpack pairs of rows, shuffle
// to quads, then swap 128-bit halves, instead of one strided scalar store
// per element.

// func transpose8x8s(blocks int, src *float32, ld int, dst *float32, w int)
TEXT ·transpose8x8s(SB), NOSPLIT, $0-40
	MOVQ blocks+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8
	MOVQ dst+24(FP), DI
	MOVQ w+32(FP), R9
	SHLQ $2, R9
	LEAQ (R8)(R8*2), R10 // 3 rows
	LEAQ (SI)(R8*4), R11 // rows 4-7
	LEAQ (R9)(R9*2), R12 // 3 dst rows
	TESTQ CX, CX
	JEQ  done

loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R10*1), Y3
	VMOVUPS (R11), Y4
	VMOVUPS (R11)(R8*1), Y5
	VMOVUPS (R11)(R8*2), Y6
	VMOVUPS (R11)(R10*1), Y7
	VUNPCKLPS Y1, Y0, Y8     // a0 b0 a1 b1 | a4 b4 a5 b5
	VUNPCKHPS Y1, Y0, Y9     // a2 b2 a3 b3 | a6 b6 a7 b7
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS   $0x44, Y10, Y8, Y0  // a0 b0 c0 d0 | a4 b4 c4 d4
	VSHUFPS   $0xEE, Y10, Y8, Y1  // column 1 | 5
	VSHUFPS   $0x44, Y11, Y9, Y2  // column 2 | 6
	VSHUFPS   $0xEE, Y11, Y9, Y3  // column 3 | 7
	VSHUFPS   $0x44, Y14, Y12, Y4 // e-h, columns 0 | 4
	VSHUFPS   $0xEE, Y14, Y12, Y5
	VSHUFPS   $0x44, Y15, Y13, Y6
	VSHUFPS   $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8  // column 0: a0-h0
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12 // column 4
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R9*1)
	VMOVUPS Y10, (DI)(R9*2)
	VMOVUPS Y11, (DI)(R12*1)
	LEAQ    (DI)(R9*4), DX
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, (DX)(R9*1)
	VMOVUPS Y14, (DX)(R9*2)
	VMOVUPS Y15, (DX)(R12*1)
	LEAQ    (DX)(R9*4), DI
	ADDQ    $32, SI
	ADDQ    $32, R11
	DECQ    CX
	JNE     loop

done:
	VZEROUPPER
	RET

// func transpose4x4d(blocks int, src *float64, ld int, dst *float64, w int)
TEXT ·transpose4x4d(SB), NOSPLIT, $0-40
	MOVQ blocks+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $3, R8
	MOVQ dst+24(FP), DI
	MOVQ w+32(FP), R9
	SHLQ $3, R9
	LEAQ (R8)(R8*2), R10
	LEAQ (R9)(R9*2), R12
	TESTQ CX, CX
	JEQ  done

loop:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R8*1), Y1
	VMOVUPD (SI)(R8*2), Y2
	VMOVUPD (SI)(R10*1), Y3
	VUNPCKLPD Y1, Y0, Y4          // a0 b0 | a2 b2
	VUNPCKHPD Y1, Y0, Y5          // a1 b1 | a3 b3
	VUNPCKLPD Y3, Y2, Y6          // c0 d0 | c2 d2
	VUNPCKHPD Y3, Y2, Y7          // c1 d1 | c3 d3
	VPERM2F128 $0x20, Y6, Y4, Y0  // column 0: a0 b0 c0 d0
	VPERM2F128 $0x20, Y7, Y5, Y1  // column 1
	VPERM2F128 $0x31, Y6, Y4, Y2  // column 2
	VPERM2F128 $0x31, Y7, Y5, Y3  // column 3
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, (DI)(R9*1)
	VMOVUPD Y2, (DI)(R9*2)
	VMOVUPD Y3, (DI)(R12*1)
	LEAQ    (DI)(R9*4), DI
	ADDQ    $32, SI
	DECQ    CX
	JNE     loop

done:
	VZEROUPPER
	RET

// Panel copy for packing B untransposed (pack.go): row p of a slab of
// 64-byte panels (16 float32 or 8 float64 columns each) goes to
// dst + q*panelStride + p*64 for panel q, so the slab is read one row at a
// time, contiguously, as the prefetchers like, and each panel written as
// the micro-kernel reads it. Strides in bytes.

// func copyPanels64(rows int, src unsafe.Pointer, srcStride int, panels int, dst unsafe.Pointer, panelStride int)
TEXT ·copyPanels64(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ srcStride+16(FP), R8
	MOVQ panels+24(FP), R9
	MOVQ dst+32(FP), DI
	MOVQ panelStride+40(FP), R10
	TESTQ CX, CX
	JEQ  cdone
	TESTQ R9, R9
	JEQ  cdone

crow:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ R9, BX

cpanel:
	VMOVUPS (R11), Y0
	VMOVUPS 32(R11), Y1
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, 32(R12)
	ADDQ    $64, R11
	ADDQ    R10, R12
	DECQ    BX
	JNZ     cpanel
	ADDQ    R8, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     crow

cdone:
	VZEROUPPER
	RET
