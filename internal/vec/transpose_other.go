//go:build !amd64

package vec

import "github.com/plumbml/plumb/tensor"

// hasTranspose8 is false off amd64: there is no vector transpose.
var hasTranspose8 = false

// TransposeBlocks covers nothing off amd64; the caller does it all.
func TransposeBlocks[T tensor.Float](dst []T, ldd int, src []T, lds int, r, c int, add bool) (rows, cols int) {
	return 0, 0
}
