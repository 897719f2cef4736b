package gemm

import (
	"runtime"
	"sync"

	"github.com/plumbml/plumb/tensor"
)

// PackedB is op(B), k×n, packed once into the micro-kernel's zero-padded
// NR-column panels with the blocking Gemm would use, for many products by
// the same B: a recurrent layer multiplies its recurrent weights at every
// step of a sequence, and Gemm packs its B again at every call (BLIS
// leaves this reuse to the caller too: its "packed" object API).
type PackedB[T tensor.Float] struct {
	cfg      *config[T]
	transB   bool
	k, n     int
	b        []T // the operand as given: the row kernel and other paths read it
	ldb      int
	kc0, nc0 int
	blocks   [][]T // slab jc (nc0 columns), slice pc (kc0 rows): blocks[jc/nc0*slices+pc/kc0]
	slices   int
	packOnce sync.Once // packs blocks at the first product on cfg's kernels
	// short is the packing for the path's short kernels (forRows), made
	// at the first product that needs it.
	shortOnce sync.Once
	short     *PackedB[T]
}

// PackB returns op(B) [k, n] (B as stored, row stride ldb) for
// GemmPacked, packed at its first product for the kernels that product
// runs on (forRows). The products read the packing, not b: b must not
// change while it is in use, except through a new PackB.
func PackB[T tensor.Float](transB bool, k, n int, b []T, ldb int) *PackedB[T] {
	return newPackedB(configFor[T](maxPackRows, n), transB, k, n, b, ldb)
}

// newPackedB returns the blocking of op(B) on path cfg, not yet packed.
func newPackedB[T tensor.Float](cfg *config[T], transB bool, k, n int, b []T, ldb int) *PackedB[T] {
	p := &PackedB[T]{cfg: cfg, transB: transB, k: k, n: n, b: b, ldb: ldb}
	if k > 0 && n > 0 {
		p.kc0 = ceilDiv(k, ceilDiv(k, cfg.kc))
		p.nc0 = roundUp(ceilDiv(n, ceilDiv(n, cfg.nc)), cfg.nr)
		p.slices = ceilDiv(k, p.kc0)
	}
	return p
}

// Dims returns op(B)'s k and n.
func (p *PackedB[T]) Dims() (k, n int) { return p.k, p.n }

// size is the number of elements the packing takes: every column rounded
// up to whole NR-column panels, times k.
func (p *PackedB[T]) size() int {
	if p.k == 0 || p.n == 0 {
		return 0
	}
	cols := 0
	for jc := 0; jc < p.n; jc += p.nc0 {
		cols += roundUp(min(p.nc0, p.n-jc), p.cfg.nr)
	}
	return cols * p.k
}

// pack packs op(B) into buf (size elements), block by block in the order
// panels reads them.
func (p *PackedB[T]) pack(buf []T) {
	p.blocks = p.blocks[:0]
	if p.k == 0 || p.n == 0 {
		return
	}
	j := job[T]{cfg: p.cfg, transB: p.transB, k: p.k, n: p.n, b: p.b, ldb: p.ldb}
	for jc := 0; jc < p.n; jc += p.nc0 {
		nc := min(p.nc0, p.n-jc)
		for pc := 0; pc < p.k; pc += p.kc0 {
			kc := min(p.kc0, p.k-pc)
			block := buf[:p.cfg.nr*kc*ceilDiv(nc, p.cfg.nr)]
			j.bPanels(block, true, pc, kc, jc, nc)
			p.blocks = append(p.blocks, block)
			buf = buf[len(block):]
		}
	}
}

// GemmPacked computes C = alpha*op(A)*op(B) + beta*C as Gemm does, with
// op(B) from PackB (k and n are its). The parts of a parallel product cut
// C by rows only, so every core reads the one packing.
func GemmPacked[T tensor.Float](transA bool, m int, alpha T, a []T, lda int, pb *PackedB[T], beta T, c []T, ldc int) {
	pp := pb.forRows(m)
	if pp == nil {
		Gemm(transA, pb.transB, m, pb.n, pb.k, alpha, a, lda, pb.b, pb.ldb, beta, c, ldc)
		return
	}
	if j, ok := newJob(transA, pb.transB, m, pb.n, pb.k, alpha, a, lda, pb.b, pb.ldb, beta, c, ldc); ok {
		j.packed = pp
		j.run(runtime.GOMAXPROCS(0))
	}
}

// SerialPacked is GemmPacked on the calling goroutine alone, for kernels
// that already split their work over the cores (Serial's reason): a
// recurrent layer running each core's share of the batch through every
// time step.
func SerialPacked[T tensor.Float](transA bool, m int, alpha T, a []T, lda int, pb *PackedB[T], beta T, c []T, ldc int) {
	pp := pb.forRows(m)
	if pp == nil {
		Serial(transA, pb.transB, m, pb.n, pb.k, alpha, a, lda, pb.b, pb.ldb, beta, c, ldc)
		return
	}
	if j, ok := newJob(transA, pb.transB, m, pb.n, pb.k, alpha, a, lda, pb.b, pb.ldb, beta, c, ldc); ok {
		j.packed = pp
		j.serial()
	}
}

// panels returns the strips of the packed block for columns jc on and
// rows pc on, nc columns wide.
func (p *PackedB[T]) panels(jc, pc, nc int) strips[T] {
	nr := p.cfg.nr
	return strips[T]{base: p.blocks[jc/p.nc0*p.slices+pc/p.kc0], step: nr * min(p.kc0, p.k-pc), rs: nr, fullOnes: ceilDiv(nc, nr)}
}

// forRows returns the packing that products of m rows run on, packed:
// p itself, or, where they take the path's short kernels (configFor), a
// packing for those kept beside p (a beam search over one source, m =
// beam width, never packs for the tall kernels). It returns nil, for a
// product that then multiplies B as given, when the path changed since
// PackB (UseReference) and when the product is one row that the row
// kernel takes (it reads B where it lies, so batch-1 inference packs
// nothing).
func (p *PackedB[T]) forRows(m int) *PackedB[T] {
	cfg := configFor[T](m, p.n)
	if configFor[T](maxPackRows, p.n) != p.cfg || m == 1 && !p.transB && cfg.row != nil {
		return nil
	}
	q := p
	if cfg != p.cfg {
		p.shortOnce.Do(func() { p.short = newPackedB(cfg, p.transB, p.k, p.n, p.b, p.ldb) })
		q = p.short
	}
	q.packOnce.Do(func() { q.pack(make([]T, q.size())) })
	return q
}
