package gemm

import (
	"unsafe"

	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
	"golang.org/x/sys/cpu"
)

//go:noescape
func transpose4x4d(blocks int, src *float64, ld int, dst *float64, w int)

// transposeFast sets dst[p*w + i] = src[i*ld + p] with the AVX register
// transposes for the rows and steps that fill whole blocks (8×8 float32 by
// vec.TransposeBlocks, 4×4 float64) and returns how many rows and steps it
// covered; pack does the rest.
func transposeFast[T tensor.Float](dst []T, w, rows, kc int, src []T, ld int) (doneRows, doneK int) {
	if !cpu.X86.HasAVX {
		return 0, 0
	}
	switch d := any(dst).(type) {
	case []float32:
		return vec.TransposeBlocks(d, w, any(src).([]float32), ld, rows, kc, false)
	case []float64:
		s := any(src).([]float64)
		doneRows, doneK = rows/4*4, kc/4*4
		for i := 0; doneK > 0 && i < doneRows; i += 4 {
			transpose4x4d(doneK/4, &s[i*ld], ld, &d[i], w)
		}
	}
	return doneRows, doneK
}

//go:noescape
func copyPanels(rows int, src unsafe.Pointer, srcStride int, panels int, dst unsafe.Pointer, panelStride int, rowBytes int)

// copyPanelsFast packs the first panels w-column panels of kc rows of src
// (row stride ld) into dst, panel q at dst[q*w*kc:], with the AVX copy
// when a panel row is a multiple of 64 bytes (w = 16 or 32 float32, 8 or
// 16 float64: the AVX2 and AVX-512 kernels' panels), and returns how many
// panels it packed; pack does the rest.
func copyPanelsFast[T tensor.Float](dst []T, w, kc, panels int, src []T, ld int) int {
	sz := int(unsafe.Sizeof(dst[0]))
	if !cpu.X86.HasAVX || w*sz%64 != 0 || panels == 0 || kc == 0 {
		return 0
	}
	_ = src[(kc-1)*ld+panels*w-1] // the last element read
	_ = dst[panels*w*kc-1]
	copyPanels(kc, unsafe.Pointer(&src[0]), ld*sz, panels, unsafe.Pointer(&dst[0]), w*kc*sz, w*sz)
	return panels
}
