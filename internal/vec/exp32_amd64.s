//go:build amd64

#include "textflag.h"

// The polynomial of Exp32 (exp32.go), p0 to p5, eight copies each.
DATA expPoly<>+0(SB)/4, $0x39506967
DATA expPoly<>+4(SB)/4, $0x39506967
DATA expPoly<>+8(SB)/4, $0x39506967
DATA expPoly<>+12(SB)/4, $0x39506967
DATA expPoly<>+16(SB)/4, $0x39506967
DATA expPoly<>+20(SB)/4, $0x39506967
DATA expPoly<>+24(SB)/4, $0x39506967
DATA expPoly<>+28(SB)/4, $0x39506967
DATA expPoly<>+32(SB)/4, $0x3ab743ce
DATA expPoly<>+36(SB)/4, $0x3ab743ce
DATA expPoly<>+40(SB)/4, $0x3ab743ce
DATA expPoly<>+44(SB)/4, $0x3ab743ce
DATA expPoly<>+48(SB)/4, $0x3ab743ce
DATA expPoly<>+52(SB)/4, $0x3ab743ce
DATA expPoly<>+56(SB)/4, $0x3ab743ce
DATA expPoly<>+60(SB)/4, $0x3ab743ce
DATA expPoly<>+64(SB)/4, $0x3c088908
DATA expPoly<>+68(SB)/4, $0x3c088908
DATA expPoly<>+72(SB)/4, $0x3c088908
DATA expPoly<>+76(SB)/4, $0x3c088908
DATA expPoly<>+80(SB)/4, $0x3c088908
DATA expPoly<>+84(SB)/4, $0x3c088908
DATA expPoly<>+88(SB)/4, $0x3c088908
DATA expPoly<>+92(SB)/4, $0x3c088908
DATA expPoly<>+96(SB)/4, $0x3d2aa9c1
DATA expPoly<>+100(SB)/4, $0x3d2aa9c1
DATA expPoly<>+104(SB)/4, $0x3d2aa9c1
DATA expPoly<>+108(SB)/4, $0x3d2aa9c1
DATA expPoly<>+112(SB)/4, $0x3d2aa9c1
DATA expPoly<>+116(SB)/4, $0x3d2aa9c1
DATA expPoly<>+120(SB)/4, $0x3d2aa9c1
DATA expPoly<>+124(SB)/4, $0x3d2aa9c1
DATA expPoly<>+128(SB)/4, $0x3e2aaaaa
DATA expPoly<>+132(SB)/4, $0x3e2aaaaa
DATA expPoly<>+136(SB)/4, $0x3e2aaaaa
DATA expPoly<>+140(SB)/4, $0x3e2aaaaa
DATA expPoly<>+144(SB)/4, $0x3e2aaaaa
DATA expPoly<>+148(SB)/4, $0x3e2aaaaa
DATA expPoly<>+152(SB)/4, $0x3e2aaaaa
DATA expPoly<>+156(SB)/4, $0x3e2aaaaa
DATA expPoly<>+160(SB)/4, $0x3f000000
DATA expPoly<>+164(SB)/4, $0x3f000000
DATA expPoly<>+168(SB)/4, $0x3f000000
DATA expPoly<>+172(SB)/4, $0x3f000000
DATA expPoly<>+176(SB)/4, $0x3f000000
DATA expPoly<>+180(SB)/4, $0x3f000000
DATA expPoly<>+184(SB)/4, $0x3f000000
DATA expPoly<>+188(SB)/4, $0x3f000000
GLOBL expPoly<>(SB), RODATA|NOPTR, $192

// BCAST broadcasts the float32 bits imm into the eight lanes of y.
#define BCAST(imm, x, y) MOVL imm, AX; VMOVD AX, x; VPBROADCASTD x, y

// EXPSHIFT8 leaves exp(Y0 - m) in Y4 for the eight float32 lanes of Y0
// by Exp32's method, with the constants expShiftAVX2 sets up in Y7 and
// Y9-Y15 (m in Y15): the argument is clamped to [lo, hi] with NaN kept
// (VMAXPS and VMINPS return their second operand on NaN), n =
// round(x·log2 e) to nearest even, r = x - n·c1 - n·c2, the polynomial
// in Estrin's order (a = p0·r + p1, b = p2·r + p3, c = p4·r + p5, p =
// (a·r² + b)·r² + c), p·r² + r + 1, times 2^n built in the exponent bits,
// and 0 where x < lo.
// Clobbers Y0-Y3, Y5, Y6.
#define EXPSHIFT8 \
	VSUBPS       Y15, Y0, Y0; \
	VCMPPS       $1, Y14, Y0, Y1; \
	VMAXPS       Y0, Y14, Y0; \
	VMINPS       Y0, Y13, Y0; \
	VMULPS       Y12, Y0, Y2; \
	VCVTPS2DQ    Y2, Y6; \
	VCVTDQ2PS    Y6, Y2; \
	VFNMADD231PS Y11, Y2, Y0; \
	VFNMADD231PS Y10, Y2, Y0; \
	VMULPS       Y0, Y0, Y5; \
	VMOVUPS      expPoly<>+0(SB), Y4; \
	VFMADD213PS  expPoly<>+32(SB), Y0, Y4; \
	VMOVUPS      expPoly<>+64(SB), Y2; \
	VFMADD213PS  expPoly<>+96(SB), Y0, Y2; \
	VMOVUPS      expPoly<>+128(SB), Y3; \
	VFMADD213PS  expPoly<>+160(SB), Y0, Y3; \
	VFMADD213PS  Y2, Y5, Y4; \
	VFMADD213PS  Y3, Y5, Y4; \
	VFMADD213PS  Y0, Y5, Y4; \
	VADDPS       Y9, Y4, Y4; \
	VPADDD       Y7, Y6, Y6; \
	VPSLLD       $23, Y6, Y6; \
	VMULPS       Y6, Y4, Y4; \
	VANDNPS      Y4, Y1, Y4

// EXPCONSTS sets up EXPSHIFT8's constants, with m from the frame at mOff.
#define EXPCONSTS(mOff) \
	VBROADCASTSS mOff(FP), Y15; \
	BCAST($0xc2aeac50, X14, Y14); \
	BCAST($0x42b00f34, X13, Y13); \
	BCAST($0x3fb8aa3b, X12, Y12); \
	BCAST($0x3f318000, X11, Y11); \
	BCAST($0xb95e8083, X10, Y10); \
	BCAST($0x3f800000, X9, Y9); \
	BCAST($127, X7, Y7)

// The constants, as float32 bits: lo = ln 2^-126 (0xc2aeac50), hi = ln
// 2^127 (0x42b00f34), log2(e) (0x3fb8aa3b), c1 and c2, ln 2's high and low
// parts (0x3f318000, 0xb95e8083), 1 (0x3f800000) and the exponent bias 127.

// func expShiftAVX2(dst, src *float32, n int, m float32) float64
//
// Writes exp(src - m) for src[0:n] (n a multiple of 8) to dst[0:n] (which
// may be src; nil: only the sum is wanted), eight lanes at a time by
// Exp32's method, and returns their sum, taken in float64.
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	EXPCONSTS(m+24)
	VXORPD       Y8, Y8, Y8      // the sum, four float64 lanes
	SHRQ         $3, CX
	JZ           done

loop:
	VMOVUPS      (SI), Y0
	EXPSHIFT8
	TESTQ        DI, DI
	JEQ          summed
	VMOVUPS      Y4, (DI)
	ADDQ         $32, DI

summed:
	VCVTPS2PD    X4, Y3
	VADDPD       Y3, Y8, Y8
	VEXTRACTF128 $1, Y4, X3
	VCVTPS2PD    X3, Y3
	VADDPD       Y3, Y8, Y8
	ADDQ         $32, SI
	DECQ         CX
	JNZ          loop

done:
	VEXTRACTF128 $1, Y8, X0
	VADDPD       X0, X8, X8
	VHADDPD      X8, X8, X8
	VZEROUPPER
	MOVSD        X8, ret+32(FP)
	RET

// func expScaleAVX2(dst, src *float32, n int, m, scale float32)
//
// Writes exp(src - m)·scale for src[0:n] (n a multiple of 8) to dst[0:n]
// (which may be src), eight lanes at a time by Exp32's method; no sum.
TEXT ·expScaleAVX2(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	EXPCONSTS(m+24)
	VBROADCASTSS scale+28(FP), Y8
	SHRQ         $3, CX
	JZ           scaled

scaleLoop:
	VMOVUPS      (SI), Y0
	EXPSHIFT8
	VMULPS       Y8, Y4, Y4
	VMOVUPS      Y4, (DI)
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          scaleLoop

scaled:
	VZEROUPPER
	RET
