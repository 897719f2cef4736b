#include "textflag.h"

// func clamp32(dst, x *float32, lo, hi float32, n int)
// Y6 = lo, Y7 = hi in every lane. VMAXPS x, lo gives lo where lo > x and
// x otherwise (x when NaN or both zeros): std::max(x, lo). VMINPS a, hi
// gives hi where hi < a and a otherwise: std::min(a, hi). One 8-lane
// vector a step: the loop is bound by loads and stores, not by the two
// instructions between them.
TEXT ·clamp32(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS lo+16(FP), Y6
	VBROADCASTSS hi+20(FP), Y7
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	XORQ         AX, AX

cloop:
	CMPQ    AX, CX
	JGE     cdone
	MOVQ    AX, DX
	SHLQ    $5, DX
	VMAXPS  (SI)(DX*1), Y6, Y0
	VMINPS  Y0, Y7, Y0
	VMOVUPS Y0, (DI)(DX*1)
	INCQ    AX
	JMP     cloop

cdone:
	VZEROUPPER
	RET
