//go:build !amd64

package im2col

// transposeBlocks covers nothing off amd64; Transpose does it all in Go.
func transposeBlocks[T Float](dst []T, ldd int, src []T, lds int, r, c int, add bool) (rows, cols int) {
	return 0, 0
}
