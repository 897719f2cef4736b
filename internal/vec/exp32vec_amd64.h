// EXP8 overwrites Y0 with r and leaves exp(Y0) in Y4 for eight float32
// lanes by Exp32's method (exp32.go), the argument clamped to
// [ln 2^-126, ln 2^127]; R8 holds the address of act32Consts.
// Clobbers Y2, Y3, Y5, Y6. It is EXPREDUCE8 followed by EXPPOLY8, which a
// kernel with a two-part argument (hi in Y0, lo added to r between the
// two) runs separately.
#define EXP8 EXPREDUCE8; EXPPOLY8

// EXPREDUCE8 clamps Y0 to [ln 2^-126, ln 2^127] and reduces it: n =
// round(Y0·log2 e) in Y2 (and as integers in Y6), Y0 = Y0 - n·ln 2 in two
// parts. Clobbers Y3.
#define EXPREDUCE8 \
	VBROADCASTSS 24(R8), Y3; \
	VMAXPS       Y3, Y0, Y0; \
	VBROADCASTSS 28(R8), Y3; \
	VMINPS       Y3, Y0, Y0; \
	VBROADCASTSS 32(R8), Y3; \
	VMULPS       Y3, Y0, Y2; \
	VCVTPS2DQ    Y2, Y6; \
	VCVTDQ2PS    Y6, Y2; \
	VBROADCASTSS 36(R8), Y3; \
	VFNMADD231PS Y3, Y2, Y0; \
	VBROADCASTSS 40(R8), Y3; \
	VFNMADD231PS Y3, Y2, Y0

// EXPPOLY8 leaves exp(r)·2^n in Y4 from r in Y0 and n in Y6 (EXPREDUCE8).
// Clobbers Y2, Y3, Y5, Y6.
#define EXPPOLY8 \
	VMULPS       Y0, Y0, Y5; \
	VBROADCASTSS 0(R8), Y4; \
	VBROADCASTSS 4(R8), Y3; \
	VFMADD213PS  Y3, Y0, Y4; \
	VBROADCASTSS 8(R8), Y2; \
	VBROADCASTSS 12(R8), Y3; \
	VFMADD213PS  Y3, Y0, Y2; \
	VFMADD213PS  Y2, Y5, Y4; \
	VBROADCASTSS 16(R8), Y2; \
	VBROADCASTSS 20(R8), Y3; \
	VFMADD213PS  Y3, Y0, Y2; \
	VFMADD213PS  Y2, Y5, Y4; \
	VFMADD213PS  Y0, Y5, Y4; \
	VBROADCASTSS 44(R8), Y3; \
	VADDPS       Y3, Y4, Y4; \
	VPBROADCASTD 48(R8), Y3; \
	VPADDD       Y3, Y6, Y6; \
	VPSLLD       $23, Y6, Y6; \
	VMULPS       Y6, Y4, Y4
