#include "textflag.h"

// Row kernels for m = 1 (one row of op(A) times an untransposed B): each
// K step broadcasts a[p] and FMAs it with a run of B row p into the
// accumulators, so the only traffic is the one pass over B that the product
// needs. Arguments (rowKernel in kernel.go): k, a, csA, b, rsB, y; strides
// in elements. y gets the plain sums; the caller applies alpha and beta.

// ROWARGS loads the arguments (strides turned into bytes) and zeroes Y0-Y3.
#define ROWARGS \
	MOVQ   k+0(FP), CX; \
	MOVQ   a+8(FP), SI; \
	MOVQ   csA+16(FP), R8; \
	SHLQ   $2, R8; \
	MOVQ   b+24(FP), DI; \
	MOVQ   rsB+32(FP), R9; \
	SHLQ   $2, R9; \
	MOVQ   y+40(FP), DX; \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

// func sgemvRow64AVX2(k int, a *float32, csA int, b *float32, rsB int, y *float32)
// 64 columns: eight ymm accumulators, enough independent FMAs per step to
// cover the FMA latency on both pipes.
TEXT ·sgemvRow64AVX2(SB), NOSPLIT, $0-48
	ROWARGS
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

loop64:
	TESTQ CX, CX
	JZ    done64
	VBROADCASTSS (SI), Y15
	VFMADD231PS  (DI), Y15, Y0
	VFMADD231PS  32(DI), Y15, Y1
	VFMADD231PS  64(DI), Y15, Y2
	VFMADD231PS  96(DI), Y15, Y3
	VFMADD231PS  128(DI), Y15, Y4
	VFMADD231PS  160(DI), Y15, Y5
	VFMADD231PS  192(DI), Y15, Y6
	VFMADD231PS  224(DI), Y15, Y7
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JMP          loop64

done64:
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VMOVUPS Y4, 128(DX)
	VMOVUPS Y5, 160(DX)
	VMOVUPS Y6, 192(DX)
	VMOVUPS Y7, 224(DX)
	VZEROUPPER
	RET

// func sgemvRow16AVX2(k int, a *float32, csA int, b *float32, rsB int, y *float32)
// 16 columns: even and odd K steps go to separate accumulator pairs (Y0:Y1
// and Y2:Y3), summed at the end, so two FMA chains run at once.
TEXT ·sgemvRow16AVX2(SB), NOSPLIT, $0-48
	ROWARGS

loop16:
	CMPQ         CX, $2
	JL           tail16
	VBROADCASTSS (SI), Y14
	ADDQ         R8, SI
	VBROADCASTSS (SI), Y15
	ADDQ         R8, SI
	VFMADD231PS  (DI), Y14, Y0
	VFMADD231PS  32(DI), Y14, Y1
	ADDQ         R9, DI
	VFMADD231PS  (DI), Y15, Y2
	VFMADD231PS  32(DI), Y15, Y3
	ADDQ         R9, DI
	SUBQ         $2, CX
	JMP          loop16

tail16:
	TESTQ        CX, CX
	JZ           done16
	VBROADCASTSS (SI), Y14
	VFMADD231PS  (DI), Y14, Y0
	VFMADD231PS  32(DI), Y14, Y1

done16:
	VADDPS  Y2, Y0, Y0
	VADDPS  Y3, Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET
