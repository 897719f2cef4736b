// Macros shared by the AVX-512 micro-kernels, whose 24 accumulators are
// Z8-Z31.

// ZERO24 clears the 24 accumulators.
#define ZERO24(xor) \
	xor Z8, Z8, Z8; \
	xor Z9, Z9, Z9; \
	xor Z10, Z10, Z10; \
	xor Z11, Z11, Z11; \
	xor Z12, Z12, Z12; \
	xor Z13, Z13, Z13; \
	xor Z14, Z14, Z14; \
	xor Z15, Z15, Z15; \
	xor Z16, Z16, Z16; \
	xor Z17, Z17, Z17; \
	xor Z18, Z18, Z18; \
	xor Z19, Z19, Z19; \
	xor Z20, Z20, Z20; \
	xor Z21, Z21, Z21; \
	xor Z22, Z22, Z22; \
	xor Z23, Z23, Z23; \
	xor Z24, Z24, Z24; \
	xor Z25, Z25, Z25; \
	xor Z26, Z26, Z26; \
	xor Z27, Z27, Z27; \
	xor Z28, Z28, Z28; \
	xor Z29, Z29, Z29; \
	xor Z30, Z30, Z30; \
	xor Z31, Z31, Z31

// SCALE24 multiplies the 24 accumulators by alpha in Z0.
#define SCALE24(mul) \
	mul Z0, Z8, Z8; \
	mul Z0, Z9, Z9; \
	mul Z0, Z10, Z10; \
	mul Z0, Z11, Z11; \
	mul Z0, Z12, Z12; \
	mul Z0, Z13, Z13; \
	mul Z0, Z14, Z14; \
	mul Z0, Z15, Z15; \
	mul Z0, Z16, Z16; \
	mul Z0, Z17, Z17; \
	mul Z0, Z18, Z18; \
	mul Z0, Z19, Z19; \
	mul Z0, Z20, Z20; \
	mul Z0, Z21, Z21; \
	mul Z0, Z22, Z22; \
	mul Z0, Z23, Z23; \
	mul Z0, Z24, Z24; \
	mul Z0, Z25, Z25; \
	mul Z0, Z26, Z26; \
	mul Z0, Z27, Z27; \
	mul Z0, Z28, Z28; \
	mul Z0, Z29, Z29; \
	mul Z0, Z30, Z30; \
	mul Z0, Z31, Z31

// TILE24 is the body of an AVX-512 micro-kernel once its arguments are
// loaded (CX = k): clear the accumulators, run step k times, scale by
// alpha, then add beta × C (addrows) or, with beta 0, overwrite C without
// reading it (putrows). xor, bcast, mul, movb and shl are the element
// type's instructions (movb and shl move and test beta as an integer).
#define TILE24(xor, step, bcast, mul, movb, shl, alpha, beta, addrows, putrows) \
	ZERO24(xor); \
	TESTQ CX, CX; \
	JEQ   scale; \
loop: \
	step; \
	DECQ CX; \
	JNE  loop; \
scale: \
	bcast alpha, Z0; \
	SCALE24(mul); \
	movb  beta, AX; \
	shl   $1, AX; \
	JEQ   overwrite; \
	bcast beta, Z1; \
	addrows; \
	VZEROUPPER; \
	RET; \
overwrite: \
	putrows; \
	VZEROUPPER; \
	RET
