// Package gemm is the single matrix-multiply entry point that every Plumb
// kernel (matmul, linear, conv via im2col, LSTM projections) calls.
//
// It follows the GotoBLAS/BLIS structure (Goto and van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", ACM TOMS 2008; Van Zee and van de
// Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS Functionality",
// ACM TOMS 2015): C is cut into NC-column slabs, K into KC-deep slices and
// the rows into MC-row blocks, so that a KC×NR panel of B stays in L1 while
// an MC×KC block of A stays in L2; a micro-kernel (Go assembly on amd64,
// see kernel_amd64.go) holds an MR×NR tile of C in registers and streams
// the whole KC loop with FMAs in one call.
//
// Packing is done where it pays, as BLIS's "pack when reuse amortises the
// copy" rule: a B panel is copied into a contiguous zero-padded KC×NR buffer
// when it is transposed or reused by many row strips, an A block into
// MC×KC of MR-row strips when it is reused by many column panels. Otherwise
// the micro-kernel reads A and B where they lie (it takes row and column
// strides), which on the thin shapes of models (a batch of 32-64 rows)
// saves a copy that would cost as much as the multiply. A ragged edge
// (M % MR, N % NR) of a packed operand is zero-padded in the packing
// buffer; of an unpacked one, it is the last whole MR rows (NR columns),
// overlapping the strip before, read where they lie. Either way the partial
// C tile goes through a small scratch tile, so there is no scalar edge loop.
//
// m = 1 products (batch-1 inference) with B untransposed go to a row kernel
// instead, which streams B once (gemv), on one core.
//
// The micro-kernels come in paths (pure Go, AVX2+FMA, AVX-512F); the one
// a process runs is chosen once, at its first product, by PLUMB_GEMM or by
// timing the paths this CPU has (path.go), and reported by Path.
package gemm

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/tensor"
)

// Gemm computes C = alpha*op(A)*op(B) + beta*C for row-major matrices, where
// op(X) is X or Xᵀ. op(A) is m×k, op(B) is k×n, C is m×n; lda, ldb and ldc
// are the row strides of A, B and C as stored. With beta == 0, C need not be
// initialised (NaN there does not leak). With alpha == 0 or k == 0, A and B
// are not read. Callers validate shapes; Gemm assumes they fit.
func Gemm[T tensor.Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if j, ok := newJob(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); ok {
		j.run(runtime.GOMAXPROCS(0))
	}
}

// Serial is Gemm on the calling goroutine alone. Kernels that already split
// their work over the cores call it inside each part (a convolution runs
// each core's images through pad, GEMM and layout change on that core),
// so that a product neither waits to wake a helper nor takes a core
// another part is using.
func Serial[T tensor.Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if j, ok := newJob(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); ok {
		j.serial()
	}
}

// newJob returns the product as a job, or false when there is nothing to
// multiply: C empty, or (k == 0 or alpha == 0) C only scaled by beta,
// which it does.
func newJob[T tensor.Float](transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) (job[T], bool) {
	if m == 0 || n == 0 {
		return job[T]{}, false
	}
	if k == 0 || alpha == 0 {
		scale(c, m, n, ldc, beta)
		return job[T]{}, false
	}
	return job[T]{cfg: configFor[T](m, n), transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc}, true
}

// gemvChunk is how many columns of C gemv computes per row-kernel call
// when beta != 0, in a pooled buffer.
const gemvChunk = 256

// gemv is Gemm for m = 1 with B untransposed, on one core: the product is
// one pass over B, bound by how fast B streams from cache, so it is
// computed by the row kernel, which reads B once, rather than by MR-row
// micro-tiles that would compute MR-1 rows of padding. With beta == 0 the
// row kernel writes into C itself; otherwise the sums go through a pooled
// buffer (a buffer on the stack would escape through the kernel's
// function value and cost an allocation per call, a large share of a
// product this small).
func gemv[T tensor.Float](row rowKernel[T], transA bool, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T) {
	csA := 1
	if transA {
		csA = lda
	}
	if beta == 0 {
		y := c[:n]
		row(k, a, csA, b, ldb, y)
		if alpha != 1 {
			for j := range y {
				y[j] *= alpha
			}
		}
		return
	}
	ws := getWorkspace[T](0, 0, gemvChunk)
	defer putWorkspace(ws)
	for j0 := 0; j0 < n; j0 += gemvChunk {
		y := ws.tile[:min(gemvChunk, n-j0)]
		row(k, a, csA, b[j0:], ldb, y)
		dst := c[j0 : j0+len(y)]
		for j, v := range y {
			dst[j] = alpha*v + beta*dst[j]
		}
	}
}

// minWorkPerCore is the multiply-add count below which a product is not given
// another core: handing a part to a helper and joining it costs a few
// microseconds when the helper has parked, about what one core multiplies
// in that time.
const minWorkPerCore = 1 << 17

// partsPerCore is how many parts of C run cuts per core at most, taken in
// turn by whichever core is free: on a shared or virtual machine one core
// can run slower than the other for a whole product, so a fixed split
// leaves a core idle waiting for the other. The cost is that each part
// re-reads or re-packs the operand it does not cut, and that a core's
// share of C moves from product to product, its operands with it out of
// the core's caches: so products under partWork multiply-adds a part (the
// thin model shapes) are cut into one part per core, where that cost
// outweighs the balance.
const partsPerCore = 4

// partWork is the multiply-adds per part below which run cuts fewer than
// partsPerCore parts per core.
const partWork = 1 << 22

// job is one product with its arguments, cut by run into parts of C.
type job[T tensor.Float] struct {
	cfg            *config[T]
	transA, transB bool
	m, n, k        int
	alpha          T
	a              []T
	lda            int
	b              []T
	ldb            int
	beta           T
	c              []T
	ldc            int
	packed         *PackedB[T] // op(B) packed by PackB (GemmPacked), or nil
}

// run multiplies on up to procs cores. It cuts C into bands of whole
// micro-tiles, by columns when op(A) is the smaller operand (each band then
// re-reads all of A, which is cheap) and by rows otherwise.
func (j *job[T]) run(procs int) {
	mr, nr := j.cfg.mr, j.cfg.nr
	work := j.m * j.n * j.k
	if j.isRow() {
		// m = 1 stays on one core: a row product takes a few
		// microseconds, about what handing half of it to a helper and
		// joining it costs, so splitting it makes it slower, not faster.
		j.serial()
		return
	}
	byCols := j.m <= j.n && j.packed == nil // a packed B is read whole by every part
	tiles := ceilDiv(j.m, mr)
	if byCols {
		tiles = ceilDiv(j.n, nr)
	}
	workers := min(procs, tiles, work/minWorkPerCore)
	if workers <= 1 {
		j.serial()
		return
	}
	// A part packs the whole operand it does not cut, k × the other side
	// of C: cut parts no thinner than minPartSide, so that this packing
	// stays small beside the part's multiply-adds.
	side := j.m
	if byCols {
		side = j.n
	}
	parts := min(tiles, partsPerCore*workers, max(workers, work/partWork), max(workers, side/minPartSide))
	j.parallel(workers, parts, byCols, mr, nr, tiles)
}

// minPartSide is the fewest rows (or columns) of C that run gives a part
// beyond the first one per core. A weight gradient (k the batch's tens of
// thousands of rows, C 640×512) cut into 8 parts of 80 rows packed its
// 61 MB operand 8 times.
const minPartSide = 256

// isRow says whether the product is one row of C with B untransposed and
// the path has a row kernel for it.
func (j *job[T]) isRow() bool {
	return j.m == 1 && !j.transB && j.cfg.row != nil
}

// parallel cuts C into parts bands of whole mr-row or nr-column tiles
// (tiles in all) and runs them on the caller and workers-1 helpers
// (internal/par).
func (j *job[T]) parallel(workers, parts int, byCols bool, mr, nr, tiles int) {
	p := getProduct[T](parts)
	for i := range parts {
		lo, hi := i*tiles/parts, (i+1)*tiles/parts
		q := *j
		if byCols {
			lo, hi = lo*nr, min(hi*nr, j.n)
			q.n = hi - lo
			if j.transB {
				q.b = j.b[lo*j.ldb:]
			} else {
				q.b = j.b[lo:]
			}
			q.c = j.c[lo:]
		} else {
			lo, hi = lo*mr, min(hi*mr, j.m)
			q.m = hi - lo
			if j.transA {
				q.a = j.a[lo:]
			} else {
				q.a = j.a[lo*j.lda:]
			}
			q.c = j.c[lo*j.ldc:]
		}
		p.jobs[i] = q
	}
	par.Run(parts, workers, p)
	putProduct(p)
}

// product is the parts of one parallel product, a par.Job; it is pooled
// so that a call allocates nothing after warm-up. par.Run returns only
// when every part is done and never touches the job after, so it goes
// back to the pool at once.
type product[T tensor.Float] struct{ jobs []job[T] }

// Do runs part i.
func (p *product[T]) Do(_, i int) { p.jobs[i].serial() }

var products32, products64 sync.Pool

func getProduct[T tensor.Float](parts int) *product[T] {
	p, ok := poolFor[T](&products32, &products64).Get().(*product[T])
	if !ok {
		p = new(product[T])
	}
	if cap(p.jobs) < parts {
		p.jobs = make([]job[T], parts)
	}
	p.jobs = p.jobs[:parts]
	return p
}

func putProduct[T tensor.Float](p *product[T]) {
	clear(p.jobs) // drop the caller's slices
	poolFor[T](&products32, &products64).Put(p)
}

// poolFor picks the float32 or float64 pool.
func poolFor[T tensor.Float](p32, p64 *sync.Pool) *sync.Pool {
	var z T
	if _, ok := any(z).(float32); ok {
		return p32
	}
	return p64
}

// serial runs the BLIS loops on one core: slabs of NC columns, slices of KC
// along K (the first applies beta, the rest accumulate), blocks of MC rows,
// then the macro-kernel over the micro-tiles of the block.
func (j *job[T]) serial() {
	cfg := j.cfg
	if j.isRow() {
		gemv(cfg.row, j.transA, j.n, j.k, j.alpha, j.a, j.lda, j.b, j.ldb, j.beta, j.c)
		return
	}
	mr, nr := cfg.mr, cfg.nr
	// Balance the blocks so the last one is not a sliver (k = 260 runs as
	// two slices of 130 rather than 256 + 4).
	kc0 := ceilDiv(j.k, ceilDiv(j.k, cfg.kc))
	mc0 := roundUp(ceilDiv(j.m, ceilDiv(j.m, cfg.mc)), mr)
	nc0 := roundUp(ceilDiv(j.n, ceilDiv(j.n, cfg.nc)), nr)
	// A block is reused by every B panel of the slab, a B panel by every A
	// strip of the block: pack what is reused enough to repay the copy.
	// Bᵀ must be packed, as the micro-kernel loads rows of B as vectors.
	packA := min(j.n, nc0) >= cfg.packAMinN
	rows := min(j.m, mc0)
	packB := j.transB || rows >= cfg.packBMinM ||
		rows > mr && j.ldb*int(unsafe.Sizeof(j.b[0])) >= cfg.packBMinStride

	bSize := nr * kc0 * ceilDiv(nc0, nr)
	if j.packed != nil {
		bSize = 0
	}
	ws := getWorkspace[T](mr*kc0*ceilDiv(mc0, mr), bSize, mr*nr)
	defer putWorkspace(ws)
	for jc := 0; jc < j.n; jc += nc0 {
		nc := min(nc0, j.n-jc)
		for pc := 0; pc < j.k; pc += kc0 {
			kc := min(kc0, j.k-pc)
			beta := j.beta
			if pc > 0 {
				beta = 1
			}
			var bs strips[T]
			if j.packed != nil {
				bs = j.packed.panels(jc, pc, nc)
			} else {
				bs = j.bPanels(ws.b, packB, pc, kc, jc, nc)
			}
			for ic := 0; ic < j.m; ic += mc0 {
				mc := min(mc0, j.m-ic)
				as := j.aStrips(ws.a, packA, ic, mc, pc, kc)
				j.macro(&as, &bs, mc, nc, kc, beta, j.c[ic*j.ldc+jc:], ws.tile)
			}
		}
	}
}

// strips describes where the micro-kernel finds A strip s (rows s*MR on) or
// B panel s (columns s*NR on): element (i, p) of a strip lies at
// base + s*step + i*rs + p*cs; element (p, j) of a panel at
// base + s*step + p*rs + j. The ragged last strip lies in edge instead:
// either packed and zero-padded, or (edgeOff > 0) the last whole MR rows
// (NR columns) of the block as they lie, of which the first edgeOff belong
// to the strip before and are computed twice but not stored again.
type strips[T tensor.Float] struct {
	base     []T
	step     int
	rs, cs   int
	edge     []T
	edgeRS   int
	edgeCS   int
	edgeOff  int
	fullOnes int // strips before the edge one
}

// at returns the start and strides of strip s, and how many of its leading
// rows (columns) to skip.
func (st *strips[T]) at(s int) (*T, int, int, int) {
	if s < st.fullOnes {
		return &st.base[s*st.step], st.rs, st.cs, 0
	}
	return &st.edge[0], st.edgeRS, st.edgeCS, st.edgeOff
}

// aStrips packs op(A)[ic:ic+mc, pc:pc+kc] into MR-row strips (element (i, p)
// at p*MR + i, zero-padded to whole strips) or, unpacked, points at A as it
// lies, the ragged last strip overlapping the one before where the block
// has a whole strip (no copy; the overlap costs what padding would), else
// packed.
func (j *job[T]) aStrips(buf []T, pack bool, ic, mc, pc, kc int) strips[T] {
	mr := j.cfg.mr
	n := ceilDiv(mc, mr)
	if pack {
		for s := range n {
			packA(j.transA, j.a, j.lda, ic+s*mr, min(mr, mc-s*mr), pc, kc, mr, buf[s*mr*kc:(s+1)*mr*kc])
		}
		return strips[T]{base: buf, step: mr * kc, rs: 1, cs: mr, fullOnes: n}
	}
	rs, cs := j.lda, 1
	if j.transA {
		rs, cs = 1, j.lda
	}
	st := strips[T]{base: j.a[ic*rs+pc*cs:], step: mr * rs, rs: rs, cs: cs, fullOnes: mc / mr,
		edge: buf, edgeRS: 1, edgeCS: mr}
	if r := mc % mr; r != 0 {
		if mc > mr {
			st.edge, st.edgeRS, st.edgeCS, st.edgeOff = j.a[(ic+mc-mr)*rs+pc*cs:], rs, cs, mr-r
		} else {
			packA(j.transA, j.a, j.lda, ic+mc-r, r, pc, kc, mr, buf[:mr*kc])
		}
	}
	return st
}

// bPanels packs op(B)[pc:pc+kc, jc:jc+nc] into NR-column panels (element
// (p, j) at p*NR + j, zero-padded to whole panels) or, unpacked, points at
// B as it lies, the ragged last panel overlapping the one before where
// the slab has a whole panel, else packed.
func (j *job[T]) bPanels(buf []T, pack bool, pc, kc, jc, nc int) strips[T] {
	nr := j.cfg.nr
	n := ceilDiv(nc, nr)
	if pack {
		done := 0
		if !j.transB {
			done = copyPanelsFast(buf, nr, kc, nc/nr, j.b[pc*j.ldb+jc:], j.ldb)
		}
		for s := done; s < n; s++ {
			packB(j.transB, j.b, j.ldb, pc, kc, jc+s*nr, min(nr, nc-s*nr), nr, buf[s*nr*kc:(s+1)*nr*kc])
		}
		return strips[T]{base: buf, step: nr * kc, rs: nr, fullOnes: n}
	}
	st := strips[T]{base: j.b[pc*j.ldb+jc:], step: nr, rs: j.ldb, fullOnes: nc / nr, edge: buf, edgeRS: nr}
	if r := nc % nr; r != 0 {
		if nc > nr {
			st.edge, st.edgeRS, st.edgeOff = j.b[pc*j.ldb+jc+nc-nr:], j.ldb, nr-r
		} else {
			packB(j.transB, j.b, j.ldb, pc, kc, jc+nc-r, r, nr, buf[:nr*kc])
		}
	}
	return st
}

// macro runs the micro-kernel over the mc×nc block of C at c: B panels in
// the outer loop so each stays in L1 while the A strips stream from L2.
// A partial tile is computed into tile and added into C from there.
func (j *job[T]) macro(as, bs *strips[T], mc, nc, kc int, beta T, c []T, tile []T) {
	cfg := j.cfg
	mr, nr := cfg.mr, cfg.nr
	for jr := 0; jr < nc; jr += nr {
		b, rsB, _, skipCols := bs.at(jr / nr)
		cols := min(nr, nc-jr)
		for ir := 0; ir < mc; ir += mr {
			a, rsA, csA, skipRows := as.at(ir / mr)
			rows := min(mr, mc-ir)
			ct := c[ir*j.ldc+jr:]
			if rows == mr && cols == nr {
				cfg.kernel(kc, a, rsA, csA, b, rsB, &ct[0], j.ldc, j.alpha, beta)
				continue
			}
			cfg.kernel(kc, a, rsA, csA, b, rsB, &tile[0], nr, j.alpha, 0)
			addTile(ct, j.ldc, tile[skipRows*nr+skipCols:], nr, rows, cols, beta)
		}
	}
}

// addTile sets the rows×cols corner of C to tile + beta*C (tile alone when
// beta is 0, so NaN in C does not leak).
func addTile[T tensor.Float](c []T, ldc int, tile []T, ldt, rows, cols int, beta T) {
	for i := range rows {
		dst, src := c[i*ldc:i*ldc+cols], tile[i*ldt:i*ldt+cols]
		if beta == 0 {
			copy(dst, src)
			continue
		}
		for x, v := range src {
			dst[x] = v + beta*dst[x]
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, b int) int { return ceilDiv(a, b) * b }

// scale sets C = beta*C (zeros when beta is 0, so NaN in C does not leak).
func scale[T tensor.Float](c []T, m, n, ldc int, beta T) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}
