package vec

// The float32 constants of the vector sigmoid and tanh kernels
// (sigmoid32_amd64.s, tanh32_amd64.s), read by byte offset, each
// broadcast to eight lanes as it is used: Exp32's polynomial p0..p5
// (0-20), its range lo and hi (24, 28), log2 e and ln 2's two parts
// (32-40), 1 (44), the exponent bias 127 as an integer (48), Tanh32's
// switch point 0.625 (52) and polynomial q0..q4 (56-72), the sign bit (76)
// and 2 (80).
var act32Consts = [21]uint32{
	0x39506967, 0x3ab743ce, 0x3c088908, 0x3d2aa9c1, 0x3e2aaaaa, 0x3f000000,
	0xc2aeac50, 0x42b00f34,
	0x3fb8aa3b, 0x3f318000, 0xb95e8083,
	0x3f800000, 127,
	0x3f200000, 0xbbbaf0ea, 0x3ca9134e, 0xbd5c1e2d, 0x3e088393, 0xbeaaaa99,
	0x80000000, 0x40000000,
}

// sigmoidAVX2 writes y[0:n] = sigmoid(x[0:n]), n a multiple of 8.
//
//go:noescape
func sigmoidAVX2(y, x *float32, n int)

// tanhAVX2 writes y[0:n] = tanh(x[0:n]), n a multiple of 8.
//
//go:noescape
func tanhAVX2(y, x *float32, n int)

// sigmoidVec runs the vector kernel on the longest multiple-of-8 prefix
// and returns its length; the caller does the rest.
func sigmoidVec(y, x []float32) int {
	n := len(y) &^ 7
	if !hasExpAVX2 || n == 0 {
		return 0
	}
	sigmoidAVX2(&y[0], &x[0], n)
	return n
}

// tanhVec is sigmoidVec for tanh.
func tanhVec(y, x []float32) int {
	n := len(y) &^ 7
	if !hasExpAVX2 || n == 0 {
		return 0
	}
	tanhAVX2(&y[0], &x[0], n)
	return n
}
