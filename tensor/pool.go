package tensor

import (
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/plumbml/plumb/internal/par"
)

// Storage reuse. A training step makes the same tensors, of the same sizes,
// step after step: op outputs, their gradients, the loss. Rather than leave
// each to the garbage collector and allocate it again, a Recycler (which
// graph.Tape.Release drives) hands the storage of a finished step back to a
// process-wide pool, and New, Zeros, Full and Clone take from that pool
// before they allocate. This is the caching allocator of PyTorch's CUDA
// backend and TensorFlow's BFC allocator, in its simplest form: free lists
// keyed by size class.
//
// Sizes are rounded up to a class: exact up to 8 elements, then four
// classes per power of two (10, 12, 14, 16, 20, 24, ...), so a new
// tensor's capacity is at most 25% above its size and a buffer serves
// every later request of its class. A request whose class has no free
// buffer takes the smallest free one of the next fitClasses classes (up to
// twice its class's size) before it allocates: batches whose sizes drift
// from step to step (sequences of varying length, the last short batch)
// then reuse the previous steps' storage instead of leaving it to the
// collector and allocating as much again. Only storage that New and its friends allocated is
// ever pooled: a tensor built by FromSlice or tensor/dense.ToTensor wraps its caller's
// memory and is never reused behind the caller's back.
//
// The memory ceiling. With batches of changing shapes (sequences of
// varying length) every step uses some size classes the last did not, and
// free lists that kept everything would hold a buffer of every class any
// step ever used. Two rules bound the pool. A buffer that no allocation
// took again within DefaultIdleFlushes flushes (Recycler.Flush, which each
// Tape.Release calls: about that many steps) is dropped, so the pool holds
// what the last few steps used, as sync.Pool's drop at each collection
// did before, but without waiting for one. And the pool never holds more
// than its limit (2 GiB unless SetPoolLimit says otherwise): a buffer
// given back beyond it first evicts the buffers given back longest ago.
// The garbage collector reclaims what is dropped. A training process's
// memory is then bounded by the limit, one step's live tensors, and the
// collector's headroom (GOGC). TrimPool empties the pool.

// maxClassBits bounds pooled sizes to 2^maxClassBits elements; larger
// tensors are allocated and collected as usual.
const maxClassBits = 40

// numClasses is the number of size classes: sizes 1..8, then four per
// power of two from 2^3 up to 2^maxClassBits.
const numClasses = 9 + 4*(maxClassBits-3)

// DefaultPoolLimit is the pool's byte limit until SetPoolLimit changes it.
// It must hold a whole step's storage: a limit below it evicts part of
// what the next step would take again, which that step then allocates
// afresh while the collector reclaims the evicted part, so the heap holds
// both (a ResNet-32 step at batch 128 must fit). Buffers
// no step takes again still go after DefaultIdleFlushes flushes.
const DefaultPoolLimit = 2 << 30

// DefaultIdleFlushes is how many flushes a pooled buffer waits to be taken
// again before the pool drops it, until SetPoolIdleFlushes changes it. A
// step whose shapes recur (a CNN's) takes every buffer back at the next
// step and loses nothing.
const DefaultIdleFlushes = 2

// pool holds the free tensors of each dtype (index dtype-1) and class, each
// list in the order they were given back, with the bytes they hold.
var pool = struct {
	sync.Mutex
	lists   [4][numClasses][]pooled
	bytes   int64 // storage held in lists
	limit   int64
	seq     uint64 // stamps each buffer given back
	flushes uint64 // Recycler flushes so far
	idle    uint64 // flushes a buffer may wait; 0: forever
}{limit: DefaultPoolLimit, idle: DefaultIdleFlushes}

// pooled is a free tensor, when it was given back, and the flush count
// then.
type pooled struct {
	t     *Tensor
	seq   uint64
	flush uint64
}

// SetPoolLimit bounds the bytes of storage the pool holds for reuse and
// returns the previous bound; a limit <= 0 turns pooling off. Lowering it
// evicts at once what no longer fits.
func SetPoolLimit(bytes int64) (previous int64) {
	pool.Lock()
	defer pool.Unlock()
	previous, pool.limit = pool.limit, max(bytes, 0)
	evictDownTo(pool.limit)
	return previous
}

// SetPoolIdleFlushes sets how many Recycler flushes (about, steps) a
// pooled buffer may wait to be taken again before it is dropped, and
// returns the previous setting; n <= 0 keeps buffers until the limit
// evicts them. Raise it when shapes recur only every few steps.
func SetPoolIdleFlushes(n int) (previous int) {
	pool.Lock()
	defer pool.Unlock()
	previous, pool.idle = int(pool.idle), uint64(max(n, 0))
	return previous
}

// PoolBytes is the storage, in bytes, that the pool holds now.
func PoolBytes() int64 {
	pool.Lock()
	defer pool.Unlock()
	return pool.bytes
}

// TrimPool empties the pool, leaving its buffers to the garbage collector.
func TrimPool() {
	pool.Lock()
	defer pool.Unlock()
	evictDownTo(0)
}

// evictDownTo drops the buffers given back longest ago until the pool
// holds at most limit bytes. The caller holds the lock.
func evictDownTo(limit int64) {
	for pool.bytes > limit {
		var oldest *[]pooled
		for d := range pool.lists {
			for c := range pool.lists[d] {
				l := &pool.lists[d][c]
				if len(*l) > 0 && (oldest == nil || (*l)[0].seq < (*oldest)[0].seq) {
					oldest = l
				}
			}
		}
		pool.bytes -= bytesOf((*oldest)[0].t)
		(*oldest)[0] = pooled{}
		*oldest = (*oldest)[1:]
	}
}

// fitClasses is how many classes above its own a request may take a free
// buffer from when its own class has none: four, a power of two, so a
// buffer serves requests down to half its size (a capacity at most 2.5x
// the request's).
const fitClasses = 4

// take returns a free tensor of dtype dt from the smallest non-empty class
// among class and the fitClasses above it, or nil.
func take(dt DType, class int) *Tensor {
	pool.Lock()
	defer pool.Unlock()
	for c := class; c <= min(class+fitClasses, numClasses-1); c++ {
		l := &pool.lists[dt-1][c]
		n := len(*l)
		if n == 0 {
			continue
		}
		t := (*l)[n-1].t
		(*l)[n-1] = pooled{}
		*l = (*l)[:n-1]
		pool.bytes -= bytesOf(t)
		return t
	}
	return nil
}

// give puts t, of class, into the pool, evicting older buffers to stay
// within the limit; a buffer larger than the limit is not kept.
func give(t *Tensor, class int) {
	b := bytesOf(t)
	pool.Lock()
	defer pool.Unlock()
	if b > pool.limit {
		return
	}
	evictDownTo(pool.limit - b)
	pool.seq++
	l := &pool.lists[t.dtype-1][class]
	*l = append(*l, pooled{t, pool.seq, pool.flushes})
	pool.bytes += b
}

// flushed counts a Recycler flush and drops the buffers that have waited
// the idle setting's flushes since they were given back. Each list is in the
// order buffers came back, so only its oldest end is looked at.
func flushed() {
	pool.Lock()
	defer pool.Unlock()
	pool.flushes++
	if pool.bytes == 0 || pool.idle == 0 || pool.flushes <= pool.idle {
		return
	}
	stale := pool.flushes - pool.idle
	for d := range pool.lists {
		for c := range pool.lists[d] {
			l := &pool.lists[d][c]
			for len(*l) > 0 && (*l)[0].flush < stale {
				pool.bytes -= bytesOf((*l)[0].t)
				(*l)[0] = pooled{}
				*l = (*l)[1:]
			}
		}
	}
}

func bytesOf(t *Tensor) int64 { return int64(capOf(t.data) * t.dtype.Size()) }

// sizeClass returns the class of n elements (n >= 1) and its size, the
// capacity New gives a tensor of n elements; ok is false above the largest
// class.
func sizeClass(n int) (class, size int, ok bool) {
	if n <= 8 {
		return n, n, true
	}
	k := bits.Len(uint(n - 1)) // 2^(k-1) < n <= 2^k, k >= 4
	if k > maxClassBits {
		return 0, n, false
	}
	half, step := 1<<(k-1), 1<<(k-3)
	j := (n - half + step - 1) / step // 1..4
	return 8 + 4*(k-4) + j, half + j*step, true
}

// floorClass returns the largest class whose size is at most c, the class
// a buffer of capacity c can serve, or false when c is 0 or too large.
func floorClass(c int) (int, bool) {
	if c <= 0 {
		return 0, false
	}
	class, size, ok := sizeClass(c)
	if !ok {
		return 0, false
	}
	if size > c {
		class--
	}
	return class, true
}

// alloc returns a tensor of dtype dt and shape, from the pool when one of
// its class is free; its storage is zeroed when zero is set, else holds
// stale values that the caller overwrites. dt and shape are valid.
func alloc(dt DType, shape Shape, zero bool) *Tensor {
	n := shape.Size()
	class, size, ok := sizeClass(n)
	if n == 0 || !ok {
		return &Tensor{dtype: dt, shape: shape.Clone(), data: makeSlice(dt, n, n), owned: n > 0}
	}
	if t := take(dt, class); t != nil {
		t.shape = append(t.shape[:0], shape...)
		if lenOf(t.data) != n {
			t.data = resize(t.data, n) // a new slice header: one small allocation
		}
		if zero {
			clearData(t.data)
		}
		return t
	}
	return &Tensor{dtype: dt, shape: shape.Clone(), data: makeSlice(dt, n, size), owned: true}
}

// recycle puts t, which nothing else uses any more, into its pool.
func recycle(t *Tensor) {
	if t.dev != nil {
		if t.owned {
			t.dev.Free()
		}
		return
	}
	if !t.owned || t.dtype < Float32 || t.dtype > Int64 {
		return
	}
	if class, ok := floorClass(capOf(t.data)); ok {
		give(t, class)
	}
}

func lenOf(data any) int {
	switch s := data.(type) {
	case []float32:
		return len(s)
	case []float64:
		return len(s)
	case []int32:
		return len(s)
	case []int64:
		return len(s)
	}
	return 0
}

func capOf(data any) int {
	switch s := data.(type) {
	case []float32:
		return cap(s)
	case []float64:
		return cap(s)
	case []int32:
		return cap(s)
	case []int64:
		return cap(s)
	}
	return 0
}

// resize returns data's slice re-cut to n elements (n <= its capacity).
func resize(data any, n int) any {
	switch s := data.(type) {
	case []float32:
		return s[:n]
	case []float64:
		return s[:n]
	case []int32:
		return s[:n]
	case []int64:
		return s[:n]
	}
	panic("unreachable")
}

// clearData zeroes data, a large one in chunks over the cores (a pooled
// gradient of a few MB otherwise clears on one core while the other waits).
func clearData(data any) {
	switch s := data.(type) {
	case []float32:
		clearChunks(s)
	case []float64:
		clearChunks(s)
	case []int32:
		clearChunks(s)
	case []int64:
		clearChunks(s)
	}
}

func clearChunks[E float32 | float64 | int32 | int64](s []E) {
	if len(s) < par.MinWork { // inline: the closure below escapes, and a pooled New allocates nothing
		clear(s)
		return
	}
	par.Elements(len(s), func(lo, hi int) { clear(s[lo:hi]) })
}

// storage returns the address range [lo, hi) of t's backing array from its
// first element to the end of its capacity; lo == hi when it has none.
func storage(t *Tensor) (lo, hi uintptr) {
	if t.dev != nil {
		return t.dev.Span()
	}
	var p unsafe.Pointer
	switch s := t.data.(type) {
	case []float32:
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []float64:
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []int32:
		p = unsafe.Pointer(unsafe.SliceData(s))
	case []int64:
		p = unsafe.Pointer(unsafe.SliceData(s))
	}
	c := capOf(t.data)
	if p == nil || c == 0 {
		return 0, 0
	}
	lo = uintptr(p)
	return lo, lo + uintptr(c*t.dtype.Size())
}

// A Recycler collects the tensors one computation made and, at Flush, gives
// back to the pool the storage that no kept tensor shares. graph.Tape uses
// one per tape: its op outputs and gradients are Added, and everything that
// outlives the step (constants, parameters, tensors the user was handed) is
// Kept.
//
// Tensors share storage through views (Reshape, Row, SliceRows), and an op
// may return one of its inputs, so Flush groups the tensors whose storage
// overlaps and frees a group only when none of its tensors is kept and one
// of them is the storage's own allocation (made by New, Zeros, Full, Clone
// and friends) covering the whole group. That tensor's storage and the
// Tensor itself go back to the pool; the next New of its size class may
// return it. So a tensor added and not kept must not be used after Flush,
// nor any view of it: that is the caller's promise.
//
// The zero Recycler is ready to use. It is not safe for concurrent use.
type Recycler struct {
	spans []span
}

type span struct {
	lo, hi uintptr
	t      *Tensor
	keep   bool
}

// Add marks t, a tensor the computation made, as free after Flush unless a
// kept tensor shares its storage. A nil t is ignored.
func (r *Recycler) Add(t *Tensor) { r.add(t, false) }

// Keep marks t as in use after Flush: neither its storage nor that of any
// tensor sharing it is given back. A nil t is ignored.
func (r *Recycler) Keep(t *Tensor) { r.add(t, true) }

func (r *Recycler) add(t *Tensor, keep bool) {
	if t == nil {
		return
	}
	lo, hi := storage(t)
	if lo == hi {
		return
	}
	r.spans = append(r.spans, span{lo: lo, hi: hi, t: t, keep: keep})
}

// Flush gives back the storage of every group of added tensors that no
// kept tensor shares, forgets everything added and kept, and returns the
// number of buffers given back. It ends a step: a pooled buffer that no
// allocation took within the idle setting's flushes is dropped.
func (r *Recycler) Flush() int {
	freed := r.giveBack(false)
	flushed()
	return freed
}

// Reclaim gives back, as Flush does, the storage of every group of added
// tensors that no kept tensor shares, in the middle of a step (graph.Tape
// calls it as Backward finishes with gradients): it forgets the kept
// tensors but holds on to the added tensors it could not give back, for
// the next Reclaim or Flush, and it does not count as a step for the idle
// rule. It returns the number of buffers given back.
func (r *Recycler) Reclaim() int { return r.giveBack(true) }

// giveBack recycles the groups of added tensors that no kept tensor
// shares; with retain, it keeps the added tensors of the other groups for
// later, else it forgets everything.
func (r *Recycler) giveBack(retain bool) int {
	slices.SortFunc(r.spans, func(a, b span) int {
		switch {
		case a.lo != b.lo:
			return cmpPtr(a.lo, b.lo)
		default:
			return cmpPtr(b.hi, a.hi) // the widest first
		}
	})
	freed, held := 0, 0
	for i := 0; i < len(r.spans); {
		g := r.spans[i]
		j, keep, root := i+1, g.keep, (*Tensor)(nil)
		hi := g.hi
		for ; j < len(r.spans) && r.spans[j].lo < hi; j++ {
			keep = keep || r.spans[j].keep
			hi = max(hi, r.spans[j].hi)
		}
		for _, s := range r.spans[i:j] {
			if s.lo == g.lo && s.hi == hi && s.t.owned {
				root = s.t
				break
			}
		}
		switch {
		case !keep && root != nil:
			recycle(root)
			freed++
		case retain:
			for _, s := range r.spans[i:j] {
				if !s.keep {
					r.spans[held] = s
					held++
				}
			}
		}
		i = j
	}
	clear(r.spans[held:])
	r.spans = r.spans[:held]
	return freed
}

func cmpPtr(a, b uintptr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
