//go:build amd64

#include "textflag.h"
#include "exp32vec_amd64.h"

// func sigmoidAVX2(y, x *float32, n int)
//
// y = 1/(1 + exp(-x)) eight lanes at a time (Sigmoid32's method); NaN
// lanes are passed through.
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ ·act32Consts(SB), R8
	SHRQ $3, CX
	JZ   done

loop:
	VMOVUPS      (SI), Y1
	VXORPS       Y0, Y0, Y0
	VSUBPS       Y1, Y0, Y0      // -x
	EXP8
	VBROADCASTSS 44(R8), Y3      // 1
	VADDPS       Y3, Y4, Y4      // 1 + exp(-x)
	VDIVPS       Y4, Y3, Y4      // 1 / (1 + exp(-x))
	VCMPPS       $3, Y1, Y1, Y2  // NaN lanes
	VBLENDVPS    Y2, Y1, Y4, Y4
	VMOVUPS      Y4, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          loop

done:
	VZEROUPPER
	RET
