//go:build amd64

#include "textflag.h"
#include "exp32vec_amd64.h"

// HORNER is one Horner step acc = acc·t + c, c the constant at byte
// offset off of erf32Consts (R9). Clobbers Y3.
#define HORNER(off, t, acc) \
	VBROADCASTSS off(R9), Y3; \
	VFMADD213PS  Y3, t, acc

// ERFC8 leaves erfc(m·|x|) in Y4 for the eight float32 lanes of x in Y1
// by erfcScaled32's method (erf32.go): t = 1/(1 + k·|x|), t·(c0 + … +
// c9·t⁹) in Y8, x² split exactly into p + e, exp(s·p + s·e) through
// EXPREDUCE8 and EXPPOLY8 with s·e added to the reduced argument, and 0
// where s·p is below ln 2^-126. k and s are read at byte offsets koff and
// soff of erf32Consts (R9); R8 holds act32Consts for the exponential.
// Clobbers Y0, Y2, Y3, Y5-Y10.
#define ERFC8(koff, soff) \
	VBROADCASTSS 84(R9), Y10; \
	VANDPS       Y10, Y1, Y10; \
	VBROADCASTSS 60(R9), Y3; \
	VBROADCASTSS koff(R9), Y2; \
	VFMADD213PS  Y3, Y10, Y2; \
	VDIVPS       Y2, Y3, Y10; \
	VBROADCASTSS 0(R9), Y8; \
	HORNER(4, Y10, Y8); \
	HORNER(8, Y10, Y8); \
	HORNER(12, Y10, Y8); \
	HORNER(16, Y10, Y8); \
	HORNER(20, Y10, Y8); \
	HORNER(24, Y10, Y8); \
	HORNER(28, Y10, Y8); \
	HORNER(32, Y10, Y8); \
	HORNER(36, Y10, Y8); \
	VMULPS       Y10, Y8, Y8; \
	VMULPS       Y1, Y1, Y0; \
	VMOVAPS      Y0, Y7; \
	VFMSUB231PS  Y1, Y1, Y7; \
	VBROADCASTSS soff(R9), Y3; \
	VMULPS       Y3, Y0, Y0; \
	VMULPS       Y3, Y7, Y7; \
	VBROADCASTSS 88(R9), Y3; \
	VCMPPS       $1, Y3, Y0, Y9; \
	EXPREDUCE8; \
	VADDPS       Y7, Y0, Y0; \
	EXPPOLY8; \
	VANDNPS      Y4, Y9, Y4; \
	VMULPS       Y8, Y4, Y4

// ERFSMALL8 leaves erf(z) in Y7 for the eight lanes of z in Y6, |z| <
// 1/2, by erfSmall32's odd polynomial z + z·(s0 + … + s4·z⁸). Clobbers
// Y3, Y5.
#define ERFSMALL8 \
	VMULPS       Y6, Y6, Y5; \
	VBROADCASTSS 40(R9), Y7; \
	HORNER(44, Y5, Y7); \
	HORNER(48, Y5, Y7); \
	HORNER(52, Y5, Y7); \
	HORNER(56, Y5, Y7); \
	VFMADD213PS  Y6, Y6, Y7

// SMALLMASK8 sets Y2 to the lanes of Y6 with |Y6| < 1/2. Clobbers Y3.
#define SMALLMASK8 \
	VBROADCASTSS 84(R9), Y3; \
	VANDPS       Y3, Y6, Y2; \
	VBROADCASTSS 64(R9), Y3; \
	VCMPPS       $1, Y3, Y2, Y2

// func geluAVX2(y, x *float32, n int)
//
// y = x·Φ(x) eight lanes at a time (Gelu32's method): with z = x/√2, Φ =
// (1 + erf(z))/2 where |z| < 1/2; elsewhere h = erfc(|z|)/2, Φ = 1 - h
// where x > 0 and h where x < 0.
TEXT ·geluAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ ·act32Consts(SB), R8
	LEAQ ·erf32Consts(SB), R9
	SHRQ $3, CX
	JZ   gdone

gloop:
	VMOVUPS      (SI), Y1
	ERFC8(80, 68)
	VBROADCASTSS 64(R9), Y3
	VMULPS       Y3, Y4, Y4     // h
	VBROADCASTSS 60(R9), Y3
	VSUBPS       Y4, Y3, Y2     // 1 - h
	VXORPS       Y5, Y5, Y5
	VCMPPS       $1, Y1, Y5, Y5 // 0 < x
	VBLENDVPS    Y5, Y2, Y4, Y4
	VBROADCASTSS 92(R9), Y3
	VMULPS       Y3, Y1, Y6     // z = x/√2
	ERFSMALL8
	VBROADCASTSS 64(R9), Y3
	VFMADD213PS  Y3, Y3, Y7     // (1 + erf(z))/2
	SMALLMASK8
	VBLENDVPS    Y2, Y7, Y4, Y4
	VMULPS       Y1, Y4, Y4
	VMOVUPS      Y4, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          gloop

gdone:
	VZEROUPPER
	RET

// func erfAVX2(y, x *float32, n int)
//
// y = erf(x) eight lanes at a time (Erf32's method): x + x·(s0 + … +
// s4·x⁸) where |x| < 1/2, (1 - erfc(|x|)) with x's sign elsewhere.
TEXT ·erfAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ ·act32Consts(SB), R8
	LEAQ ·erf32Consts(SB), R9
	SHRQ $3, CX
	JZ   edone

eloop:
	VMOVUPS      (SI), Y1
	ERFC8(76, 72)
	VBROADCASTSS 60(R9), Y3
	VSUBPS       Y4, Y3, Y4     // 1 - erfc(|x|)
	VBROADCASTSS 84(R9), Y3
	VANDNPS      Y1, Y3, Y2     // x's sign bit
	VORPS        Y2, Y4, Y4
	VMOVAPS      Y1, Y6
	ERFSMALL8
	SMALLMASK8
	VBLENDVPS    Y2, Y7, Y4, Y4
	VMOVUPS      Y4, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          eloop

edone:
	VZEROUPPER
	RET
