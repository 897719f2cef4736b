package gemm

import (
	"math"
	"unsafe"

	"github.com/plumbml/plumb/tensor"
)

// microKernel computes one MR×NR tile: acc = Σ_p A(i, p)·B(p, j) over k
// steps, then c = alpha*acc (beta == 0: C is not read) or
// c = alpha*acc + beta*c. Element (i, p) of A lies at a + i*rsA + p*csA and
// element (p, j) of B at b + p*rsB + j (strides in elements), so the same
// kernel reads packed strips and matrices as they lie; ldc is C's row
// stride. The whole K loop runs inside one call.
type microKernel[T tensor.Float] func(k int, a *T, rsA, csA int, b *T, rsB int, c *T, ldc int, alpha, beta T)

// config is one micro-kernel with its register tile (MR×NR) and the cache
// blocks that suit it (KC, MC, NC), plus when packing pays on it.
type config[T tensor.Float] struct {
	name       string
	mr, nr     int
	kc, mc, nc int
	// packAMinN is the block width from which an A block is packed,
	// packBMinM the block height from which B panels are packed, and
	// packBMinStride the row stride of B in bytes from which they are
	// packed whenever two or more A strips reuse them.
	packAMinN, packBMinM int
	packBMinStride       int
	kernel               microKernel[T]
	// row, where set, computes the m = 1 product with B untransposed.
	row rowKernel[T]
	// narrow, where set, runs the products at most narrow.nr columns wide,
	// in which this config's wider tile would compute mostly padding.
	narrow *config[T]
	// short, where set, runs the products at most short.mr rows tall, in
	// which this config's taller tile would compute mostly padding.
	short *config[T]
}

// rowKernel computes y[j] = Σ_p a[p*csA]·b[p*rsB + j] for j < len(y): one
// row of op(A) times an untransposed B, the m = 1 product of batch-1
// inference, where an MR-row micro-tile would compute MR-1 rows of padding.
// y gets the plain sums; the caller applies alpha and beta.
type rowKernel[T tensor.Float] func(k int, a []T, csA int, b []T, rsB int, y []T)

// rowGo is the portable rowKernel, also the tail of the assembly ones: one
// axpy of a B row into y per K step.
func rowGo[T tensor.Float](k int, a []T, csA int, b []T, rsB int, y []T) {
	if len(y) == 0 { // the assembly runs covered every column: skip the K loop
		return
	}
	clear(y)
	for p := range k {
		av := a[p*csA]
		for j, bv := range b[p*rsB:][:len(y)] {
			y[j] += av * bv
		}
	}
}

// path names an implementation of the micro-kernels.
type path int

const (
	pathGo path = iota
	pathAVX2
	pathAVX512
	numPaths
)

// configs32 and configs64 hold the kernels this build and CPU can run,
// indexed by path (nil where unsupported); archConfigs fills the
// assembly ones on amd64.
var configs32, configs64 = archConfigs()

// active is the path Gemm uses, set once by choose (path.go) on first use.
// Tests switch it, after choose has run, to check every supported path
// against the reference.
var active path

// current returns the active path's configuration for T.
func current[T tensor.Float]() *config[T] {
	chooseOnce()
	var z T
	if _, ok := any(z).(float32); ok {
		return any(configs32[active]).(*config[T])
	}
	return any(configs64[active]).(*config[T])
}

// configFor returns the kernels that a product of m rows and n columns
// runs on the active path: its short ones for at most short.mr rows, else
// its narrow ones for at most narrow.nr columns, else its own. A packing
// of B (PackB) does not know its products' rows and takes m =
// maxPackRows.
func configFor[T tensor.Float](m, n int) *config[T] {
	cfg := current[T]()
	switch {
	case cfg.short != nil && m <= cfg.short.mr:
		return cfg.short
	case cfg.narrow != nil && n <= cfg.narrow.nr:
		return cfg.narrow
	}
	return cfg
}

// maxPackRows stands for the unknown row count of a packing's products.
const maxPackRows = math.MaxInt

// pageStride is packBMinStride on every path: with B rows 4 KiB or more
// apart, every K step of an unpacked panel is a new page, which the
// hardware prefetchers do not cross, and all its rows fall in the same
// few L1 sets, so the panel is fetched again from L2 or L3 for each A
// strip, which packing avoids; closer rows stay in cache unpacked, and
// packing them costs more than it saves.
const pageStride = 4096

// goMR×goNR is the pure-Go kernel's tile: 16 accumulators fit the 16+
// floating-point registers of amd64 and arm64 alongside the operands.
const goMR, goNR = 4, 4

func goConfig[T tensor.Float]() *config[T] {
	return &config[T]{name: "go", mr: goMR, nr: goNR, kc: 256, mc: 128, nc: 2048,
		packAMinN: 64, packBMinM: 16, packBMinStride: pageStride, kernel: goKernel[T]}
}

// goKernel is the portable micro-kernel for CPUs without the assembly ones.
func goKernel[T tensor.Float](k int, a *T, rsA, csA int, b *T, rsB int, c *T, ldc int, alpha, beta T) {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 T
	pa, pb := unsafe.Pointer(a), unsafe.Pointer(b)
	sz := unsafe.Sizeof(*a)
	ra, ca, rb := uintptr(rsA)*sz, uintptr(csA)*sz, uintptr(rsB)*sz
	// Each step's pointers are formed from the bases, so none ever points
	// past the end of A or B (the unsafe.Pointer rules, which -race's
	// checkptr enforces, forbid even forming one).
	for p := range uintptr(k) {
		ap := unsafe.Add(pa, p*ca)
		a0 := *(*T)(ap)
		a1 := *(*T)(unsafe.Add(ap, ra))
		a2 := *(*T)(unsafe.Add(ap, 2*ra))
		a3 := *(*T)(unsafe.Add(ap, 3*ra))
		bv := (*[goNR]T)(unsafe.Add(pb, p*rb))
		b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	acc := [goMR][goNR]T{
		{c00, c01, c02, c03},
		{c10, c11, c12, c13},
		{c20, c21, c22, c23},
		{c30, c31, c32, c33},
	}
	for i := range goMR {
		row := (*[goNR]T)(unsafe.Add(unsafe.Pointer(c), uintptr(i*ldc)*sz))
		for j := range goNR {
			if beta == 0 {
				row[j] = alpha * acc[i][j]
			} else {
				row[j] = alpha*acc[i][j] + beta*row[j]
			}
		}
	}
}
