#include "textflag.h"

// func maxAbs32(x *float32, n int) float32
// The largest |x[i]| of n float32 values (n a multiple of 8, at least 8),
// or NaN if any is NaN: the sign bits cleared (VANDPS with 0x7fffffff),
// eight running maxima, and an unordered-compare mask that remembers a
// NaN, since VMAXPS alone would drop one already taken in (as max32).
TEXT ·maxAbs32(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7fffffff, AX
	MOVL         AX, X5
	VBROADCASTSS X5, Y5
	VANDPS       (SI), Y5, Y0
	VCMPPS       $3, Y0, Y0, Y4
	ADDQ         $32, SI
	SUBQ         $8, CX

aloop:
	TESTQ   CX, CX
	JEQ     areduce
	VANDPS  (SI), Y5, Y1
	VCMPPS  $3, Y1, Y1, Y2
	VORPS   Y2, Y4, Y4
	VMAXPS  Y1, Y0, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     aloop

areduce:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVMSKPS    Y4, AX
	TESTL        AX, AX
	JEQ          adone
	MOVL         $0x7fc00000, AX
	MOVL         AX, X0

adone:
	VZEROUPPER
	MOVSS X0, ret+16(FP)
	RET
