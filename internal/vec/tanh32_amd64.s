//go:build amd64

#include "textflag.h"
#include "exp32vec_amd64.h"

// func tanhAVX2(y, x *float32, n int)
//
// y = tanh(x) eight lanes at a time by Tanh32's method: both the
// polynomial (|x| < 0.625) and 1 - 2/(exp(2|x|) + 1) are computed and
// blended, then the sign of x is put back; NaN lanes are passed through.
TEXT ·tanhAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ ·act32Consts(SB), R8
	SHRQ $3, CX
	JZ   done

loop:
	VMOVUPS      (SI), Y1
	VBROADCASTSS 76(R8), Y3     // the sign bit
	VANDNPS      Y1, Y3, Y7     // a = |x|
	VANDPS       Y3, Y1, Y8     // the sign of x
	VADDPS       Y7, Y7, Y0     // 2a
	EXP8
	VBROADCASTSS 44(R8), Y3     // 1
	VADDPS       Y3, Y4, Y4     // exp(2a) + 1
	VBROADCASTSS 80(R8), Y5     // 2
	VDIVPS       Y4, Y5, Y4     // 2 / (exp(2a) + 1)
	VSUBPS       Y4, Y3, Y4     // 1 - that
	VMULPS       Y7, Y7, Y9     // z = a²
	VBROADCASTSS 56(R8), Y10    // q0
	VBROADCASTSS 60(R8), Y3
	VFMADD213PS  Y3, Y9, Y10    // p = p·z + q1
	VBROADCASTSS 64(R8), Y3
	VFMADD213PS  Y3, Y9, Y10
	VBROADCASTSS 68(R8), Y3
	VFMADD213PS  Y3, Y9, Y10
	VBROADCASTSS 72(R8), Y3
	VFMADD213PS  Y3, Y9, Y10
	VMULPS       Y9, Y10, Y10   // p·z
	VFMADD213PS  Y7, Y7, Y10    // a + a·p·z
	VBROADCASTSS 52(R8), Y3     // 0.625
	VCMPPS       $1, Y3, Y7, Y2 // a < 0.625
	VBLENDVPS    Y2, Y10, Y4, Y4
	VORPS        Y8, Y4, Y4     // the sign of x
	VCMPPS       $3, Y1, Y1, Y2 // NaN lanes
	VBLENDVPS    Y2, Y1, Y4, Y4
	VMOVUPS      Y4, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          loop

done:
	VZEROUPPER
	RET
