#include "textflag.h"

// ROWE loads the four pixels (eight channels) of one tile row at R, plus 0,
// 1, 2 and 3 pixel strides (DX, DX·2, R9), into a, b, c, d and leaves the
// row's column transform d·B: e0 = d0 − d2 in a, e1 = d1 + d2 in b,
// e2 = d2 − d1 in t, e3 = d1 − d3 in d.
#define ROWE(R, a, b, c, d, t) \
	VMOVUPS (R), a; \
	VMOVUPS (R)(DX*1), b; \
	VMOVUPS (R)(DX*2), c; \
	VMOVUPS (R)(R9*1), d; \
	VSUBPS  c, a, a; \
	VSUBPS  d, b, d; \
	VSUBPS  b, c, t; \
	VADDPS  c, b, b

// STORE4 stores four vectors to planes P, P+1, P+2 and P+3 (plane stride
// BX, 3 planes R14).
#define STORE4(P, a, b, c, d) \
	VMOVUPS a, (P); \
	VMOVUPS b, (P)(BX*1); \
	VMOVUPS c, (P)(BX*2); \
	VMOVUPS d, (P)(R14*1)

// func inputAVX(tiles int, x *float32, rs, c int, v *float32, vs int)
//
// Per tile and eight channels: the rows' column transforms e1 (Y0 Y1 Y4
// Y3) and e2 (Y5 Y6 Y9 Y8) stay in registers while e0 and then e3 pass
// through Y10-Y14, and the rows of Bᵀ combine them: planes 0-3 get
// e0 − e2, 4-7 e1 + e2, 8-11 e2 − e1 and 12-15 e1 − e3.
TEXT ·inputAVX(SB), NOSPLIT, $0-48
	MOVQ tiles+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ rs+16(FP), AX
	SHLQ $2, AX               // row stride in bytes
	MOVQ c+24(FP), DX
	SHLQ $2, DX               // pixel stride in bytes
	MOVQ v+32(FP), DI
	MOVQ vs+40(FP), BX
	SHLQ $2, BX               // plane stride in bytes
	LEAQ (DX)(DX*2), R9       // 3 pixels
	LEAQ (BX)(BX*2), R14      // 3 planes
	LEAQ (SI)(AX*1), R11      // row 1
	LEAQ (SI)(AX*2), R12      // row 2
	LEAQ (R11)(AX*2), R13     // row 3
	TESTQ CX, CX
	JEQ   idone

itile:
	MOVQ c+24(FP), R8

ichan:
	ROWE(R11, Y0, Y1, Y2, Y3, Y4)
	ROWE(R12, Y5, Y6, Y7, Y8, Y9)
	ROWE(SI, Y10, Y11, Y12, Y13, Y14)
	VSUBPS Y5, Y10, Y10
	VSUBPS Y6, Y11, Y11
	VSUBPS Y9, Y14, Y14
	VSUBPS Y8, Y13, Y13
	STORE4(DI, Y10, Y11, Y14, Y13)
	ROWE(R13, Y10, Y11, Y12, Y13, Y14)
	VSUBPS Y10, Y0, Y10
	VSUBPS Y11, Y1, Y11
	VSUBPS Y14, Y4, Y14
	VSUBPS Y13, Y3, Y13
	LEAQ   (DI)(R14*4), R10   // plane 12
	STORE4(R10, Y10, Y11, Y14, Y13)
	VADDPS Y5, Y0, Y10
	VADDPS Y6, Y1, Y11
	VADDPS Y9, Y4, Y12
	VADDPS Y8, Y3, Y13
	LEAQ   (DI)(BX*4), R10    // plane 4
	STORE4(R10, Y10, Y11, Y12, Y13)
	VSUBPS Y0, Y5, Y10
	VSUBPS Y1, Y6, Y11
	VSUBPS Y4, Y9, Y12
	VSUBPS Y3, Y8, Y13
	LEAQ   (DI)(BX*8), R10    // plane 8
	STORE4(R10, Y10, Y11, Y12, Y13)
	ADDQ   $32, SI
	ADDQ   $32, R11
	ADDQ   $32, R12
	ADDQ   $32, R13
	ADDQ   $32, DI
	SUBQ   $8, R8
	JNZ    ichan

	// The next tile starts two pixels on: one more pixel than the channel
	// loop walked. Its planes' values follow this tile's.
	ADDQ DX, SI
	ADDQ DX, R11
	ADDQ DX, R12
	ADDQ DX, R13
	DECQ CX
	JNZ  itile

idone:
	VZEROUPPER
	RET

// func outputAVX(tiles int, m *float32, ms, k int, b, y *float32, ys int)
//
// Per tile and eight channels: Aᵀ sums the plane rows column by column
// (s0 in Y0-Y3, s1 in Y4-Y7), A sums those across, and the bias is added
// to the four outputs.
TEXT ·outputAVX(SB), NOSPLIT, $0-56
	MOVQ tiles+0(FP), CX
	MOVQ m+8(FP), SI
	MOVQ ms+16(FP), BX
	SHLQ $2, BX               // plane stride in bytes
	MOVQ k+24(FP), DX
	SHLQ $2, DX               // pixel stride in bytes
	MOVQ b+32(FP), R9
	MOVQ y+40(FP), DI
	MOVQ ys+48(FP), AX
	SHLQ $2, AX
	ADDQ DI, AX               // output row 1
	LEAQ (BX)(BX*2), R14      // 3 planes
	LEAQ (SI)(BX*4), R10      // planes 4-7
	LEAQ (SI)(BX*8), R11      // planes 8-11
	LEAQ (R10)(BX*8), R13     // planes 12-15
	TESTQ CX, CX
	JEQ   odone

otile:
	MOVQ k+24(FP), R8
	MOVQ R9, R12

ochan:
	VMOVUPS (R10), Y4         // column 0: s0 = m0 + m1 + m2, s1 = m1 − m2 − m3
	VADDPS  (SI), Y4, Y0
	VSUBPS  (R11), Y4, Y4
	VADDPS  (R11), Y0, Y0
	VSUBPS  (R13), Y4, Y4
	VMOVUPS (R10)(BX*1), Y5
	VADDPS  (SI)(BX*1), Y5, Y1
	VSUBPS  (R11)(BX*1), Y5, Y5
	VADDPS  (R11)(BX*1), Y1, Y1
	VSUBPS  (R13)(BX*1), Y5, Y5
	VMOVUPS (R10)(BX*2), Y6
	VADDPS  (SI)(BX*2), Y6, Y2
	VSUBPS  (R11)(BX*2), Y6, Y6
	VADDPS  (R11)(BX*2), Y2, Y2
	VSUBPS  (R13)(BX*2), Y6, Y6
	VMOVUPS (R10)(R14*1), Y7
	VADDPS  (SI)(R14*1), Y7, Y3
	VSUBPS  (R11)(R14*1), Y7, Y7
	VADDPS  (R11)(R14*1), Y3, Y3
	VSUBPS  (R13)(R14*1), Y7, Y7
	VMOVUPS (R12), Y15        // bias
	VADDPS  Y1, Y0, Y8
	VADDPS  Y2, Y8, Y8
	VADDPS  Y15, Y8, Y8       // y00 = s00 + s01 + s02 + b
	VSUBPS  Y2, Y1, Y9
	VSUBPS  Y3, Y9, Y9
	VADDPS  Y15, Y9, Y9       // y01 = s01 − s02 − s03 + b
	VADDPS  Y5, Y4, Y10
	VADDPS  Y6, Y10, Y10
	VADDPS  Y15, Y10, Y10     // y10
	VSUBPS  Y6, Y5, Y11
	VSUBPS  Y7, Y11, Y11
	VADDPS  Y15, Y11, Y11     // y11
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(DX*1)
	VMOVUPS Y10, (AX)
	VMOVUPS Y11, (AX)(DX*1)
	ADDQ    $32, SI
	ADDQ    $32, R10
	ADDQ    $32, R11
	ADDQ    $32, R13
	ADDQ    $32, R12
	ADDQ    $32, DI
	ADDQ    $32, AX
	SUBQ    $8, R8
	JNZ     ochan

	// The next tile's outputs start two pixels on, one more than walked.
	ADDQ DX, DI
	ADDQ DX, AX
	DECQ CX
	JNZ  otile

odone:
	VZEROUPPER
	RET

// func outputAdjointAVX(tiles int, dy *float32, ys, k int, dm *float32, ms int)
//
// Per block and eight channels: a, b, c, d (Y0-Y3) are the block's
// [a b; c d]; p = a+c, q = b+d (Y5, Y6), r = a−c, s = b−d (Y7, Y8) and
// −c (Y9) give the four plane rows, each [x, x+y, x−y, −y] of its pair
// (the last [−c, −c−d, d−c, d]). Y15 holds zero for the negations.
TEXT ·outputAdjointAVX(SB), NOSPLIT, $0-48
	MOVQ   tiles+0(FP), CX
	MOVQ   dy+8(FP), SI
	MOVQ   ys+16(FP), AX
	SHLQ   $2, AX
	ADDQ   SI, AX             // block row 1
	MOVQ   k+24(FP), DX
	SHLQ   $2, DX             // pixel stride in bytes
	MOVQ   dm+32(FP), DI
	MOVQ   ms+40(FP), BX
	SHLQ   $2, BX             // plane stride in bytes
	LEAQ   (BX)(BX*2), R14    // 3 planes
	VXORPS Y15, Y15, Y15
	TESTQ  CX, CX
	JEQ    adone

atile:
	MOVQ k+24(FP), R8

achan:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(DX*1), Y1
	VMOVUPS (AX), Y2
	VMOVUPS (AX)(DX*1), Y3
	VADDPS  Y1, Y0, Y10
	VSUBPS  Y1, Y0, Y11
	VSUBPS  Y1, Y15, Y12
	STORE4(DI, Y0, Y10, Y11, Y12)
	VADDPS  Y2, Y0, Y5        // p
	VADDPS  Y3, Y1, Y6        // q
	VADDPS  Y6, Y5, Y10
	VSUBPS  Y6, Y5, Y11
	VSUBPS  Y6, Y15, Y12
	LEAQ    (DI)(BX*4), R10   // plane 4
	STORE4(R10, Y5, Y10, Y11, Y12)
	VSUBPS  Y2, Y0, Y7        // r
	VSUBPS  Y3, Y1, Y8        // s
	VADDPS  Y8, Y7, Y10
	VSUBPS  Y8, Y7, Y11
	VSUBPS  Y8, Y15, Y12
	LEAQ    (DI)(BX*8), R10   // plane 8
	STORE4(R10, Y7, Y10, Y11, Y12)
	VSUBPS  Y2, Y15, Y9       // −c
	VSUBPS  Y3, Y9, Y10       // −c − d
	VSUBPS  Y2, Y3, Y11       // d − c
	LEAQ    (DI)(R14*4), R10  // plane 12
	STORE4(R10, Y9, Y10, Y11, Y3)
	ADDQ    $32, SI
	ADDQ    $32, AX
	ADDQ    $32, DI
	SUBQ    $8, R8
	JNZ     achan

	// The next block starts two pixels on, one more than walked.
	ADDQ DX, SI
	ADDQ DX, AX
	DECQ CX
	JNZ  atile

adone:
	VZEROUPPER
	RET
