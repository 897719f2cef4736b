#include "textflag.h"

// Transposing copy for packing float64 (pack.go): dst[p*w + j] =
// src[j*ld + p] for a group of 4 rows j and p in whole blocks of 4. Each
// block is a register transpose: unpack pairs of rows, then swap 128-bit
// halves, instead of one strided scalar store per element. float32 goes
// through vec.TransposeBlocks.

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
// panels of rowBytes each (a multiple of 64: 16 or 32 float32, 8 or 16
// float64 columns) goes to dst + q*panelStride + p*rowBytes for panel q, so
// the slab is read one row at a time, contiguously, as the prefetchers
// like, and each panel written as the micro-kernel reads it. Strides in
// bytes.

// func copyPanels(rows int, src unsafe.Pointer, srcStride int, panels int, dst unsafe.Pointer, panelStride int, rowBytes int)
TEXT ·copyPanels(SB), NOSPLIT, $0-56
	MOVQ rows+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ srcStride+16(FP), R8
	MOVQ panels+24(FP), R9
	MOVQ dst+32(FP), DI
	MOVQ panelStride+40(FP), R10
	MOVQ rowBytes+48(FP), DX
	TESTQ CX, CX
	JEQ  cdone
	TESTQ R9, R9
	JEQ  cdone

crow:
	MOVQ SI, R11
	MOVQ DI, R12
	MOVQ R9, BX

cpanel:
	XORQ R13, R13

cchunk:
	VMOVUPS (R11), Y0
	VMOVUPS 32(R11), Y1
	VMOVUPS Y0, (R12)(R13*1)
	VMOVUPS Y1, 32(R12)(R13*1)
	ADDQ    $64, R11
	ADDQ    $64, R13
	CMPQ    R13, DX
	JLT     cchunk
	ADDQ    R10, R12
	DECQ    BX
	JNZ     cpanel
	ADDQ    R8, SI
	ADDQ    DX, DI
	DECQ    CX
	JNZ     crow

cdone:
	VZEROUPPER
	RET
