package qgemm

//go:noescape
func requantRowsAVX2(rows, groups int, acc, corr *int32, mul, add *float32, zero, lo uint8, out *uint8)

// requantAVX2 runs GemmUint8's requantization of rows rows of n columns
// (n a multiple of 8; acc and out rows of n elements each, one after
// another) in assembly.
func requantAVX2(rows int, acc, corr []int32, mul, add []float32, zero, lo uint8, out []uint8) {
	n := len(corr)
	if rows == 0 || n == 0 {
		return
	}
	_, _, _, _, _ = acc[:rows*n], mul[:n], add[:n], out[:rows*n], corr[:n:n]
	requantRowsAVX2(rows, n/8, &acc[0], &corr[0], &mul[0], &add[0], zero, lo, &out[0])
}
