#include "textflag.h"

// func add32(dst, src *float32, n int)
// dst[i] += src[i] for i < n, n a multiple of 8: 32 values per round in
// four ymm registers, then 8 at a time.
TEXT ·add32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

wide:
	CMPQ    CX, $32
	JLT     narrow
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS  (DI), Y0, Y0
	VADDPS  32(DI), Y1, Y1
	VADDPS  64(DI), Y2, Y2
	VADDPS  96(DI), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     wide

narrow:
	TESTQ   CX, CX
	JEQ     done
	VMOVUPS (SI), Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     narrow

done:
	VZEROUPPER
	RET

// func addConst32(dst *float32, v float32, n int)
// dst[i] += v for i < n, n a multiple of 8.
TEXT ·addConst32(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	VBROADCASTSS v+8(FP), Y4
	MOVQ         n+16(FP), CX

wide:
	CMPQ    CX, $32
	JLT     narrow
	VADDPS  (DI), Y4, Y0
	VADDPS  32(DI), Y4, Y1
	VADDPS  64(DI), Y4, Y2
	VADDPS  96(DI), Y4, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     wide

narrow:
	TESTQ   CX, CX
	JEQ     done
	VADDPS  (DI), Y4, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     narrow

done:
	VZEROUPPER
	RET
