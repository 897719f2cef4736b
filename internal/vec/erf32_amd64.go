package vec

// erfAVX2 writes y[0:n] = erf(x[0:n]), n a multiple of 8, by Erf32's
// method eight lanes at a time (erf32_amd64.s).
//
//go:noescape
func erfAVX2(y, x *float32, n int)

// geluAVX2 writes y[0:n] = gelu(x[0:n]), n a multiple of 8, by Gelu32's
// method eight lanes at a time (erf32_amd64.s).
//
//go:noescape
func geluAVX2(y, x *float32, n int)

// erfVec runs erfAVX2 on the longest multiple-of-8 prefix and returns its
// length; the caller does the rest.
func erfVec(y, x []float32) int {
	n := len(y) &^ 7
	if !hasExpAVX2 || n == 0 {
		return 0
	}
	erfAVX2(&y[0], &x[0], n)
	return n
}

// geluVec is erfVec for gelu.
func geluVec(y, x []float32) int {
	n := len(y) &^ 7
	if !hasExpAVX2 || n == 0 {
		return 0
	}
	geluAVX2(&y[0], &x[0], n)
	return n
}
