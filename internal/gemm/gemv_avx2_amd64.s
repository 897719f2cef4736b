#include "textflag.h"

// Row kernels for m = 1 (one row of op(A) times an untransposed B): each
// K step broadcasts a[p] and FMAs it with a run of B row p into the
// accumulators, so the only traffic is the one pass over B that the product
// needs. Arguments (rowKernel in kernel.go): k, a, csA, b, rsB, y; strides
// in elements. y gets the plain sums; the caller applies alpha and beta.
// Each kernel comes in float32 and float64, the same code on 4- or 8-byte
// elements (shift is log2 of the element size).

// ROWARGS loads the arguments (strides turned into bytes) and zeroes Y0-Y3.
#define ROWARGS(shift, xor) \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ csA+16(FP), R8; \
	SHLQ $shift, R8; \
	MOVQ b+24(FP), DI; \
	MOVQ rsB+32(FP), R9; \
	SHLQ $shift, R9; \
	MOVQ y+40(FP), DX; \
	xor  Y0, Y0, Y0; \
	xor  Y1, Y1, Y1; \
	xor  Y2, Y2, Y2; \
	xor  Y3, Y3, Y3

// FMA8 adds the broadcast t times the 256 bytes of B at (r) into Y0-Y7.
#define FMA8(fma, t, r) \
	fma (r), t, Y0; \
	fma 32(r), t, Y1; \
	fma 64(r), t, Y2; \
	fma 96(r), t, Y3; \
	fma 128(r), t, Y4; \
	fma 160(r), t, Y5; \
	fma 192(r), t, Y6; \
	fma 224(r), t, Y7

// STEP1 is one K step of the 256-byte kernels: a[p] times row p of B.
#define STEP1(bcast, fma) \
	bcast (SI), Y15; \
	FMA8(fma, Y15, DI); \
	ADDQ  R8, SI; \
	ADDQ  R9, DI

// ROW256 is the body of the 256-byte kernels (64 float32 or 32 float64
// columns): eight ymm accumulators, enough independent FMAs per step to
// cover the FMA latency on both pipes. With pf > 0, each step also
// prefetches the same run pf rows ahead (R12 = pf*rsB bytes): the run is
// a strided walk through B, 256 bytes from each row, which the hardware
// prefetchers follow less well than a contiguous one. The caller passes 0
// where B is in L1 already, or where the prefetched lines would evict each
// other from their few L1 sets before use.
#define ROW256(shift, xor, bcast, fma, mov) \
	ROWARGS(shift, xor); \
	xor   Y4, Y4, Y4; \
	xor   Y5, Y5, Y5; \
	xor   Y6, Y6, Y6; \
	xor   Y7, Y7, Y7; \
	TESTQ CX, CX; \
	JZ    done; \
	MOVQ  pf+48(FP), R12; \
	IMULQ R9, R12; \
	JZ    loop; \
looppf: \
	PREFETCHT0 (DI)(R12*1); \
	PREFETCHT0 64(DI)(R12*1); \
	PREFETCHT0 128(DI)(R12*1); \
	PREFETCHT0 192(DI)(R12*1); \
	STEP1(bcast, fma); \
	DECQ CX; \
	JNZ  looppf; \
	JMP  done; \
loop: \
	STEP1(bcast, fma); \
	DECQ CX; \
	JNZ  loop; \
done: \
	mov Y0, (DX); \
	mov Y1, 32(DX); \
	mov Y2, 64(DX); \
	mov Y3, 96(DX); \
	mov Y4, 128(DX); \
	mov Y5, 160(DX); \
	mov Y6, 192(DX); \
	mov Y7, 224(DX); \
	VZEROUPPER; \
	RET

// ROW64 is the body of the 64-byte kernels (16 float32 or 8 float64
// columns): even and odd K steps go to separate accumulator pairs (Y0:Y1
// and Y2:Y3), summed at the end, so two FMA chains run at once.
#define ROW64(shift, xor, bcast, fma, add, mov) \
	ROWARGS(shift, xor); \
loop: \
	CMPQ  CX, $2; \
	JL    tail; \
	bcast (SI), Y14; \
	ADDQ  R8, SI; \
	bcast (SI), Y15; \
	ADDQ  R8, SI; \
	fma   (DI), Y14, Y0; \
	fma   32(DI), Y14, Y1; \
	ADDQ  R9, DI; \
	fma   (DI), Y15, Y2; \
	fma   32(DI), Y15, Y3; \
	ADDQ  R9, DI; \
	SUBQ  $2, CX; \
	JMP   loop; \
tail: \
	TESTQ CX, CX; \
	JZ    done; \
	bcast (SI), Y14; \
	fma   (DI), Y14, Y0; \
	fma   32(DI), Y14, Y1; \
done: \
	add Y2, Y0, Y0; \
	add Y3, Y1, Y1; \
	mov Y0, (DX); \
	mov Y1, 32(DX); \
	VZEROUPPER; \
	RET

// func sgemvRow64AVX2(k int, a *float32, csA int, b *float32, rsB int, y *float32, pf int)
TEXT ·sgemvRow64AVX2(SB), NOSPLIT, $0-56
	ROW256(2, VXORPS, VBROADCASTSS, VFMADD231PS, VMOVUPS)

// func sgemvRow16AVX2(k int, a *float32, csA int, b *float32, rsB int, y *float32)
TEXT ·sgemvRow16AVX2(SB), NOSPLIT, $0-48
	ROW64(2, VXORPS, VBROADCASTSS, VFMADD231PS, VADDPS, VMOVUPS)

// func dgemvRow32AVX2(k int, a *float64, csA int, b *float64, rsB int, y *float64, pf int)
TEXT ·dgemvRow32AVX2(SB), NOSPLIT, $0-56
	ROW256(3, VXORPD, VBROADCASTSD, VFMADD231PD, VMOVUPD)

// func dgemvRow8AVX2(k int, a *float64, csA int, b *float64, rsB int, y *float64)
TEXT ·dgemvRow8AVX2(SB), NOSPLIT, $0-48
	ROW64(3, VXORPD, VBROADCASTSD, VFMADD231PD, VADDPD, VMOVUPD)
