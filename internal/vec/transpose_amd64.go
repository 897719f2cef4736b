package vec

import (
	"github.com/plumbml/plumb/tensor"
	"golang.org/x/sys/cpu"
)

//go:noescape
func transpose8s(blocks int, src *float32, lds int, dst *float32, ldd int, add bool)

// hasTranspose8 reports whether transpose8s can run: it needs AVX (and the
// OS saving the ymm registers, which cpu.X86.HasAVX includes).
var hasTranspose8 = cpu.X86.HasAVX

// TransposeBlocks writes (or with add, adds) the transpose of the whole 8×8
// blocks of the r×c float32 matrix at src (row stride lds) into dst (row
// stride ldd), dst[j*ldd + i] = src[i*lds + j], with AVX register
// transposes, and returns the rows and columns of src it covered
// (multiples of 8); the caller does the rest. Other types, and CPUs
// without AVX, get 0, 0. It is the one vector transpose under GEMM's
// packing and the convolutions' layout changes.
func TransposeBlocks[T tensor.Float](dst []T, ldd int, src []T, lds int, r, c int, add bool) (rows, cols int) {
	d, ok := any(dst).([]float32)
	if !ok || !hasTranspose8 || r < 8 || c < 8 {
		return 0, 0
	}
	s := any(src).([]float32)
	rows, cols = r/8*8, c/8*8
	_ = s[(rows-1)*lds+cols-1] // the last element read
	_ = d[(cols-1)*ldd+rows-1] // and written
	for i := 0; i < rows; i += 8 {
		transpose8s(cols/8, &s[i*lds], lds, &d[i], ldd, add)
	}
	return rows, cols
}
