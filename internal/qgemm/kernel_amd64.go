package qgemm

import "golang.org/x/sys/cpu"

// The AVX2 kernels (kernel_amd64.s), tileKernel and rowKernel on raw
// pointers; kg is the number of four-step K groups, rsA, gs and stride in
// bytes, ldc in int32s.

//go:noescape
func tile4x16AVX2(kg int, a *uint8, rsA, gs int, b *int8, c *int32, ldc int)

//go:noescape
func tile4x8AVX2(kg int, a *uint8, rsA, gs int, b *int8, c *int32, ldc int)

//go:noescape
func row16AVX2(kg int, a *uint8, stride int, b *int8, c *int32)

//go:noescape
func dequant8AVX2(groups int, acc, corr *int32, scale, bias, out *float32, relu bool)

// avx2Kernels wraps the assembly, or is nil where the CPU (or its OS's
// saving of the ymm registers, which cpu.X86.HasAVX2 includes) lacks
// AVX2.
var avx2Kernels = func() *kernels {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	return &kernels{name: "avx2", tile: tileAVX2, row: rowAVX2, dequant: dequantAVX2, requant: requantAVX2, tile8: tile8AVX2}
}()

// tileAVX2 checks the slice bounds the assembly relies on (a slice
// expression panics, before any memory outside is read, on a caller's
// bug) and runs it.
func tileAVX2(kg int, a []uint8, rsA, gs int, b []int8, c []int32, ldc int) {
	if kg == 0 {
		clearTile(c, ldc)
		return
	}
	_, _, _ = a[:(kg-1)*gs+(mr-1)*rsA+kStep], b[:kg*nr*kStep], c[:(mr-1)*ldc+nr]
	tile4x16AVX2(kg, &a[0], rsA, gs, &b[0], &c[0], ldc)
}

// tile8AVX2 is tileAVX2 for a panel whose last eight columns are
// padding: it computes and stores only the first eight.
func tile8AVX2(kg int, a []uint8, rsA, gs int, b []int8, c []int32, ldc int) {
	if kg == 0 {
		for i := range mr {
			clear(c[i*ldc : i*ldc+nr/2])
		}
		return
	}
	_, _, _ = a[:(kg-1)*gs+(mr-1)*rsA+kStep], b[:kg*nr*kStep], c[:(mr-1)*ldc+nr/2]
	tile4x8AVX2(kg, &a[0], rsA, gs, &b[0], &c[0], ldc)
}

func rowAVX2(kg int, a []uint8, stride int, b []int8, c []int32) {
	if kg == 0 {
		clear(c[:nr])
		return
	}
	_, _, _ = a[:(kg-1)*stride+kStep], b[:kg*nr*kStep], c[:nr]
	row16AVX2(kg, &a[0], stride, &b[0], &c[0])
}

func clearTile(c []int32, ldc int) {
	for i := range mr {
		clear(c[i*ldc : i*ldc+nr])
	}
}

// dequantAVX2 runs the float32 epilogue's whole groups of eight columns
// in assembly and returns how many columns it did.
func dequantAVX2(acc, corr []int32, scale, bias, out []float32, relu bool) int {
	g := len(acc) / 8
	if g == 0 {
		return 0
	}
	n := g * 8
	_, _, _, _ = corr[:n], scale[:n], out[:n], acc[:n]
	var pb *float32
	if bias != nil {
		pb = &bias[:n][0]
	}
	dequant8AVX2(g, &acc[0], &corr[0], &scale[0], pb, &out[0], relu)
	return n
}
