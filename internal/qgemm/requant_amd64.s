#include "textflag.h"

// func requantRowsAVX2(rows, groups int, acc, corr *int32, mul, add *float32, zero, lo uint8, out *uint8)
//
// GemmUint8's requantization of rows rows of groups×8 columns (acc's
// rows and out's rows follow one another, groups×8 elements each; corr,
// mul and add are per column): t = float32(acc − corr)·mul + add (a
// multiply, then an add, as the Go loop rounds them), clamped to
// [−2^20, 2^20] (VMAXPS takes the bound for NaN), rounded half to even
// by VCVTPS2DQ in the default rounding mode, plus the zero point, then
// saturated to uint8 by VPACKSSDW and VPACKUSWB, and raised to lo (the
// ReLU's zero point, or 0) by VPMAXUB. Only VEX-encoded instructions:
// a legacy SSE one (MOVD) after a 256-bit op costs a state transition.
TEXT ·requantRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ    rows+0(FP), DX
	MOVQ    groups+8(FP), BX
	MOVQ    acc+16(FP), SI
	MOVBLZX zero+48(FP), AX
	VMOVD   AX, X13
	VPBROADCASTD X13, Y13
	MOVBLZX lo+49(FP), AX
	VMOVD   AX, X12
	VPBROADCASTB X12, X12
	MOVL    $0xC9800000, AX // -2^20
	VMOVD   AX, X14
	VBROADCASTSS X14, Y14
	MOVL    $0x49800000, AX // 2^20
	VMOVD   AX, X15
	VBROADCASTSS X15, Y15
	MOVQ    out+56(FP), DI

rqrow:
	MOVQ corr+24(FP), R8
	MOVQ mul+32(FP), R9
	MOVQ add+40(FP), R10
	MOVQ BX, CX

rqloop:
	VMOVDQU      (SI), Y0
	VPSUBD       (R8), Y0, Y0
	VCVTDQ2PS    Y0, Y0
	VMULPS       (R9), Y0, Y0
	VADDPS       (R10), Y0, Y0
	VMAXPS       Y14, Y0, Y0
	VMINPS       Y15, Y0, Y0
	VCVTPS2DQ    Y0, Y0
	VPADDD       Y13, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW    X1, X0, X0
	VPACKUSWB    X0, X0, X0
	VPMAXUB      X12, X0, X0
	VMOVQ        X0, (DI)
	ADDQ         $32, SI
	ADDQ         $32, R8
	ADDQ         $32, R9
	ADDQ         $32, R10
	ADDQ         $8, DI
	DECQ         CX
	JNE          rqloop
	DECQ         DX
	JNE          rqrow
	VZEROUPPER
	RET
