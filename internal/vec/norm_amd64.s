#include "textflag.h"

// The float32 loops of norm.go. VCVTPS2PD widens four float32 values to
// float64 lanes, VCVTPD2PSY rounds four float64 lanes back (to nearest, as
// Go's conversion does).

// func sumF64x32(x *float32, n int) float64
// Four running sums of four lanes, sixteen values a step.
TEXT ·sumF64x32(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sloop:
	TESTQ     CX, CX
	JEQ       ssum
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       sloop

ssum:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, ret+16(FP)
	VZEROUPPER
	RET

// func sumSqDevF64x32(x *float32, n int, mu float64) float64
// As sumF64x32, summing (x − mu)² (a multiply, then an add: no FMA).
TEXT ·sumSqDevF64x32(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD mu+16(FP), Y8
	VXORPD       Y0, Y0, Y0
	VXORPD       Y1, Y1, Y1
	VXORPD       Y2, Y2, Y2
	VXORPD       Y3, Y3, Y3

qloop:
	TESTQ     CX, CX
	JEQ       qsum
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD 32(SI), Y6
	VCVTPS2PD 48(SI), Y7
	VSUBPD    Y8, Y4, Y4
	VSUBPD    Y8, Y5, Y5
	VSUBPD    Y8, Y6, Y6
	VSUBPD    Y8, Y7, Y7
	VMULPD    Y4, Y4, Y4
	VMULPD    Y5, Y5, Y5
	VMULPD    Y6, Y6, Y6
	VMULPD    Y7, Y7, Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $64, SI
	SUBQ      $16, CX
	JMP       qloop

qsum:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, ret+24(FP)
	VZEROUPPER
	RET

// func sumProdDevF64x32(gr, x *float32, n int, mu float64) (sg, sgx float64)
// Two running sums of four lanes for each of Σ g and Σ g·(x − mu), eight
// values a step.
TEXT ·sumProdDevF64x32(SB), NOSPLIT, $0-48
	MOVQ         gr+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         n+16(FP), CX
	VBROADCASTSD mu+24(FP), Y8
	VXORPD       Y0, Y0, Y0
	VXORPD       Y1, Y1, Y1
	VXORPD       Y2, Y2, Y2
	VXORPD       Y3, Y3, Y3

ploop:
	TESTQ     CX, CX
	JEQ       psum
	VCVTPS2PD (SI), Y4
	VCVTPS2PD 16(SI), Y5
	VCVTPS2PD (DI), Y6
	VCVTPS2PD 16(DI), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VSUBPD    Y8, Y6, Y6
	VSUBPD    Y8, Y7, Y7
	VMULPD    Y6, Y4, Y4
	VMULPD    Y7, Y5, Y5
	VADDPD    Y4, Y2, Y2
	VADDPD    Y5, Y3, Y3
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       ploop

psum:
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, sg+32(FP)
	VADDPD       Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X3
	VADDPD       X3, X2, X2
	VUNPCKHPD    X2, X2, X3
	VADDSD       X3, X2, X2
	VMOVSD       X2, sgx+40(FP)
	VZEROUPPER
	RET

// func affine32(y, x *float32, n int, mu, k, b float64)
// y = (x − mu)·k + b in float64, eight values a step.
TEXT ·affine32(SB), NOSPLIT, $0-48
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD mu+24(FP), Y8
	VBROADCASTSD k+32(FP), Y9
	VBROADCASTSD b+40(FP), Y10

aloop:
	TESTQ      CX, CX
	JEQ        adone
	VCVTPS2PD  (SI), Y0
	VCVTPS2PD  16(SI), Y1
	VSUBPD     Y8, Y0, Y0
	VSUBPD     Y8, Y1, Y1
	VMULPD     Y9, Y0, Y0
	VMULPD     Y9, Y1, Y1
	VADDPD     Y10, Y0, Y0
	VADDPD     Y10, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VMOVUPS    X0, (DI)
	VMOVUPS    X1, 16(DI)
	ADDQ       $32, SI
	ADDQ       $32, DI
	SUBQ       $8, CX
	JMP        aloop

adone:
	VZEROUPPER
	RET

// func affineGrad32(dx, gr, x *float32, n int, mu, k, c0, c1 float64)
// dx = k·((g − c0) − c1·(x − mu)) in float64, eight values a step.
TEXT ·affineGrad32(SB), NOSPLIT, $0-64
	MOVQ         dx+0(FP), DI
	MOVQ         gr+8(FP), SI
	MOVQ         x+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSD mu+32(FP), Y8
	VBROADCASTSD k+40(FP), Y9
	VBROADCASTSD c0+48(FP), Y10
	VBROADCASTSD c1+56(FP), Y11

gloop:
	TESTQ      CX, CX
	JEQ        gdone
	VCVTPS2PD  (DX), Y0
	VCVTPS2PD  16(DX), Y1
	VCVTPS2PD  (SI), Y2
	VCVTPS2PD  16(SI), Y3
	VSUBPD     Y8, Y0, Y0
	VSUBPD     Y8, Y1, Y1
	VMULPD     Y11, Y0, Y0
	VMULPD     Y11, Y1, Y1
	VSUBPD     Y10, Y2, Y2
	VSUBPD     Y10, Y3, Y3
	VSUBPD     Y0, Y2, Y2
	VSUBPD     Y1, Y3, Y3
	VMULPD     Y9, Y2, Y2
	VMULPD     Y9, Y3, Y3
	VCVTPD2PSY Y2, X2
	VCVTPD2PSY Y3, X3
	VMOVUPS    X2, (DI)
	VMOVUPS    X3, 16(DI)
	ADDQ       $32, SI
	ADDQ       $32, DX
	ADDQ       $32, DI
	SUBQ       $8, CX
	JMP        gloop

gdone:
	VZEROUPPER
	RET

// func normScale32(y, x, gamma, beta *float32, n int, mu, inv float64)
// y = gamma·((x − mu)·inv) + beta in float64, eight values a step.
TEXT ·normScale32(SB), NOSPLIT, $0-56
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gamma+16(FP), DX
	MOVQ         beta+24(FP), BX
	MOVQ         n+32(FP), CX
	VBROADCASTSD mu+40(FP), Y8
	VBROADCASTSD inv+48(FP), Y9

nloop:
	TESTQ      CX, CX
	JEQ        ndone
	VCVTPS2PD  (SI), Y0
	VCVTPS2PD  16(SI), Y1
	VCVTPS2PD  (DX), Y2
	VCVTPS2PD  16(DX), Y3
	VCVTPS2PD  (BX), Y4
	VCVTPS2PD  16(BX), Y5
	VSUBPD     Y8, Y0, Y0
	VSUBPD     Y8, Y1, Y1
	VMULPD     Y9, Y0, Y0
	VMULPD     Y9, Y1, Y1
	VMULPD     Y0, Y2, Y2
	VMULPD     Y1, Y3, Y3
	VADDPD     Y4, Y2, Y2
	VADDPD     Y5, Y3, Y3
	VCVTPD2PSY Y2, X2
	VCVTPD2PSY Y3, X3
	VMOVUPS    X2, (DI)
	VMOVUPS    X3, 16(DI)
	ADDQ       $32, SI
	ADDQ       $32, DX
	ADDQ       $32, BX
	ADDQ       $32, DI
	SUBQ       $8, CX
	JMP        nloop

ndone:
	VZEROUPPER
	RET

// func normScaleGradSums32(gr, x, gamma *float32, sgamma, sbeta *float64, n int, mu, inv float64) (sg, sgx float64)
// Four values a step: x̂ = (x − mu)·inv, gg = gr·gamma; running sums of gg
// and gg·x̂; sgamma += gr·x̂ and sbeta += gr in place.
TEXT ·normScaleGradSums32(SB), NOSPLIT, $0-80
	MOVQ         gr+0(FP), SI
	MOVQ         x+8(FP), DX
	MOVQ         gamma+16(FP), BX
	MOVQ         sgamma+24(FP), R8
	MOVQ         sbeta+32(FP), R9
	MOVQ         n+40(FP), CX
	VBROADCASTSD mu+48(FP), Y8
	VBROADCASTSD inv+56(FP), Y9
	VXORPD       Y12, Y12, Y12
	VXORPD       Y13, Y13, Y13

uloop:
	TESTQ     CX, CX
	JEQ       usum
	VCVTPS2PD (DX), Y0
	VSUBPD    Y8, Y0, Y0
	VMULPD    Y9, Y0, Y0
	VCVTPS2PD (SI), Y1
	VCVTPS2PD (BX), Y2
	VMULPD    Y2, Y1, Y2
	VADDPD    Y2, Y12, Y12
	VMULPD    Y0, Y2, Y3
	VADDPD    Y3, Y13, Y13
	VMULPD    Y0, Y1, Y4
	VADDPD    (R8), Y4, Y4
	VMOVUPD   Y4, (R8)
	VADDPD    (R9), Y1, Y5
	VMOVUPD   Y5, (R9)
	ADDQ      $16, SI
	ADDQ      $16, DX
	ADDQ      $16, BX
	ADDQ      $32, R8
	ADDQ      $32, R9
	SUBQ      $4, CX
	JMP       uloop

usum:
	VEXTRACTF128 $1, Y12, X1
	VADDPD       X1, X12, X12
	VUNPCKHPD    X12, X12, X1
	VADDSD       X1, X12, X12
	VMOVSD       X12, sg+64(FP)
	VEXTRACTF128 $1, Y13, X1
	VADDPD       X1, X13, X13
	VUNPCKHPD    X13, X13, X1
	VADDSD       X1, X13, X13
	VMOVSD       X13, sgx+72(FP)
	VZEROUPPER
	RET

// func normScaleGrad32(dx, gr, x, gamma *float32, n int, mu, inv, a, b float64)
// Four values a step: dx = inv·((gr·gamma − a) − x̂·b).
TEXT ·normScaleGrad32(SB), NOSPLIT, $0-72
	MOVQ         dx+0(FP), DI
	MOVQ         gr+8(FP), SI
	MOVQ         x+16(FP), DX
	MOVQ         gamma+24(FP), BX
	MOVQ         n+32(FP), CX
	VBROADCASTSD mu+40(FP), Y8
	VBROADCASTSD inv+48(FP), Y9
	VBROADCASTSD a+56(FP), Y10
	VBROADCASTSD b+64(FP), Y11

vloop:
	TESTQ      CX, CX
	JEQ        vdone
	VCVTPS2PD  (DX), Y0
	VSUBPD     Y8, Y0, Y0
	VMULPD     Y9, Y0, Y0
	VCVTPS2PD  (SI), Y1
	VCVTPS2PD  (BX), Y2
	VMULPD     Y2, Y1, Y1
	VSUBPD     Y10, Y1, Y1
	VMULPD     Y11, Y0, Y0
	VSUBPD     Y0, Y1, Y1
	VMULPD     Y1, Y9, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DX
	ADDQ       $16, BX
	ADDQ       $16, DI
	SUBQ       $4, CX
	JMP        vloop

vdone:
	VZEROUPPER
	RET
