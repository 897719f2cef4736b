package vec

// maxAbs32 returns the largest |x[i]| of n float32 values, or NaN if any
// is NaN (n a multiple of 8, at least 8).
//
//go:noescape
func maxAbs32(x *float32, n int) float32
