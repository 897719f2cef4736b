#include "textflag.h"

// func dynRangeAVX2(x *float32, n int, acc *[24]float32)
// acc[0:8] = lane-wise min(0, x), acc[8:16] = lane-wise max(0, x), and
// acc[16:24] all-ones bits in a lane that saw a NaN, over the first n
// elements (n a multiple of 8).
TEXT ·dynRangeAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ acc+16(FP), DI
	VXORPS Y1, Y1, Y1 // min
	VXORPS Y2, Y2, Y2 // max
	VXORPS Y3, Y3, Y3 // NaN lanes

rangeLoop:
	CMPQ CX, $8
	JL   rangeDone
	VMOVUPS (SI), Y0
	VMINPS  Y1, Y0, Y1
	VMAXPS  Y2, Y0, Y2
	VCMPPS  $3, Y0, Y0, Y4 // unordered: NaN
	VORPS   Y4, Y3, Y3
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     rangeLoop

rangeDone:
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VZEROUPPER
	RET

// func dynQuantizeAVX2(x *float32, n int, scale, zero float32, q *uint8)
// q[i] = saturate(roundHalfEven(x[i]/scale) + zero) to [0, 255] for the
// first n elements (n a multiple of 8; x finite).
TEXT ·dynQuantizeAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS scale+16(FP), Y1
	VBROADCASTSS zero+20(FP), Y2
	MOVQ         q+24(FP), DI
	VXORPS       Y3, Y3, Y3
	MOVL         $0x437f0000, AX // 255.0
	VMOVD        AX, X4
	VBROADCASTSS X4, Y4

quantLoop:
	CMPQ         CX, $8
	JL           quantDone
	VMOVUPS      (SI), Y0
	VDIVPS       Y1, Y0, Y0
	VROUNDPS     $0, Y0, Y0 // to nearest, half to even
	VADDPS       Y2, Y0, Y0
	VMAXPS       Y3, Y0, Y0
	VMINPS       Y4, Y0, Y0
	VCVTPS2DQ    Y0, Y0
	VEXTRACTI128 $1, Y0, X5
	VPACKUSDW    X5, X0, X0
	VPACKUSWB    X0, X0, X0
	MOVQ         X0, (DI)
	ADDQ         $32, SI
	ADDQ         $8, DI
	SUBQ         $8, CX
	JMP          quantLoop

quantDone:
	VZEROUPPER
	RET
