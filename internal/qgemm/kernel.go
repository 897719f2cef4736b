package qgemm

import (
	"fmt"
	"os"
	"sync"
)

// tileKernel computes one mr×nr tile of raw sums Σ_p A[i][p]·B[p][j]
// over kg groups of four K steps from mr rows of A and a B panel as
// PackB lays it out, and stores it at c (row stride ldc) without reading
// c. Row i's four bytes of group g lie at a[i*rsA+g*gs:]: a strip packed
// by packA (rsA 4, gs mr·4) or rows of A as they lie (rsA the row
// stride, gs 4) when K is whole groups.
type tileKernel func(kg int, a []uint8, rsA, gs int, b []int8, c []int32, ldc int)

// rowKernel computes one row of a tile, nr raw sums, into c: the row's
// four bytes of group g lie at a[g*stride:], so it reads one row of a
// packed strip (stride mr·4) or a row packed alone (stride 4). It serves
// the m = 1 products of batch-1 inference and a last strip of one row,
// where the mr-row tile would compute three rows of padding.
type rowKernel func(kg int, a []uint8, stride int, b []int8, c []int32)

// kernels is one implementation of the kernels.
type kernels struct {
	name string
	tile tileKernel
	// tile8, where set, is tile for a last panel of at most eight real
	// columns: it computes and stores only columns 0-7 of the tile.
	tile8 tileKernel
	row   rowKernel
	// dequant, where set, runs a leading part of the float32 epilogue's
	// row (Epilogue.dequantRow; bias nil for none) and returns how many
	// columns it did; the Go loop does the rest.
	dequant func(acc, corr []int32, scale, bias, out []float32, relu bool) int
	// requant, where set, runs GemmUint8's requantization (requantizeRow)
	// of rows rows of len(corr) columns, a multiple of 8, acc's and out's
	// rows one after another.
	requant func(rows int, acc, corr []int32, mul, add []float32, zero, lo uint8, out []uint8)
}

// goKernels are the portable kernels, the path off amd64 and on CPUs
// without AVX2. Their sums are exact whatever the weights; PackB's range
// check keeps every path's results the same.
var goKernels = &kernels{name: "go", tile: tileGo, row: rowGo}

func tileGo(kg int, a []uint8, rsA, gs int, b []int8, c []int32, ldc int) {
	var acc [mr][nr]int32
	b = b[:kg*nr*kStep]
	for g := range kg {
		bg := b[g*nr*kStep:][:nr*kStep]
		for i := range mr {
			ag := a[i*rsA+g*gs:][:kStep]
			a0, a1, a2, a3 := int32(ag[0]), int32(ag[1]), int32(ag[2]), int32(ag[3])
			row := &acc[i]
			for j := range nr {
				bj := bg[j*kStep : j*kStep+kStep]
				row[j] += a0*int32(bj[0]) + a1*int32(bj[1]) + a2*int32(bj[2]) + a3*int32(bj[3])
			}
		}
	}
	for i := range mr {
		copy(c[i*ldc:i*ldc+nr], acc[i][:])
	}
}

func rowGo(kg int, a []uint8, stride int, b []int8, c []int32) {
	var acc [nr]int32
	b = b[:kg*nr*kStep]
	for g := range kg {
		ag, bg := a[g*stride:][:kStep], b[g*nr*kStep:][:nr*kStep]
		a0, a1, a2, a3 := int32(ag[0]), int32(ag[1]), int32(ag[2]), int32(ag[3])
		for j := range nr {
			bj := bg[j*kStep : j*kStep+kStep]
			acc[j] += a0*int32(bj[0]) + a1*int32(bj[1]) + a2*int32(bj[2]) + a3*int32(bj[3])
		}
	}
	copy(c[:nr], acc[:])
}

// Path choice. The assembly path is taken where CPUID reports it and
// PLUMB_QGEMM does not pin "go". With one assembly path there is nothing
// to time; a VNNI path, when written, would be chosen against AVX2 by
// measurement as internal/gemm chooses AVX-512.
var (
	chosen  sync.Once
	active  *kernels
	reason  string
	chooseE error
)

func current() *kernels {
	chosen.Do(func() {
		active, reason, chooseE = choose(os.Getenv("PLUMB_QGEMM"))
		if chooseE != nil {
			fmt.Fprintln(os.Stderr, chooseE)
		}
	})
	return active
}

// choose picks the kernels from PLUMB_QGEMM's value (env) and the CPU:
// "go" pins the portable kernels, "avx2" or "" takes AVX2 where the CPU
// has it; any other value, or "avx2" without AVX2, gives an error for a
// note and the choice made as if env were unset.
func choose(env string) (*kernels, string, error) {
	var err error
	switch env {
	case "go":
		return goKernels, "pinned by PLUMB_QGEMM", nil
	case "", "avx2":
		if env == "avx2" && avx2Kernels == nil {
			err = fmt.Errorf("plumb: PLUMB_QGEMM=%q: this CPU lacks AVX2; using the go kernels", env)
		}
	default:
		err = fmt.Errorf("plumb: PLUMB_QGEMM=%q: want avx2 or go; choosing the path as if it were unset", env)
	}
	if avx2Kernels != nil {
		return avx2Kernels, "AVX2 reported by CPUID (no VNNI path is written)", err
	}
	return goKernels, "the only path this CPU has (no AVX2)", err
}

// Path returns the name of the kernels the products run on ("avx2" or
// "go") and why they were chosen.
func Path() (name, why string) {
	k := current()
	return k.name, reason
}
