// Package scratch pools the kernels' scratch buffers, one pool per element
// type, so that a training step reuses its buffers instead of allocating
// them on every call (a convolution's row matrix is C·KH·KW·OH·OW
// elements per core). ops and internal/conv share these pools.
package scratch

import "sync"

// Elem is what the kernels keep scratch buffers of: float32 and float64
// (im2col matrices, per-core partial sums, recomputed maximums) and int
// (max pool's argmax indices).
type Elem interface{ float32 | float64 | int }

var pool32, pool64, poolInts sync.Pool

// Get returns a pooled buffer of n elements, contents undefined; Put
// gives it back.
func Get[E Elem](n int) *[]E {
	s, _ := poolOf[E]().Get().(*[]E)
	if s == nil {
		s = new([]E)
	}
	if cap(*s) < n {
		*s = make([]E, n)
	}
	*s = (*s)[:n]
	return s
}

// Put returns a buffer from Get to its pool.
func Put[E Elem](s *[]E) { poolOf[E]().Put(s) }

func poolOf[E Elem]() *sync.Pool {
	switch any(*new(E)).(type) {
	case float32:
		return &pool32
	case float64:
		return &pool64
	}
	return &poolInts
}
