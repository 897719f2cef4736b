package ops

import "sync"

// scratchElem is what the kernels keep scratch buffers of: float32 and
// float64 (im2col matrices, per-core partial sums, recomputed maximums)
// and int (max pool's argmax indices).
type scratchElem interface{ float32 | float64 | int }

// The kernels' scratch pools, one per element type, so that a training
// step reuses its buffers instead of allocating them on every call (a
// convolution's row matrix is C·KH·KW·OH·OW elements per core).
var scratch32, scratch64, scratchInts sync.Pool

// getScratch returns a pooled buffer of n elements, contents undefined;
// putScratch gives it back.
func getScratch[E scratchElem](n int) *[]E {
	s, _ := scratchPool[E]().Get().(*[]E)
	if s == nil {
		s = new([]E)
	}
	if cap(*s) < n {
		*s = make([]E, n)
	}
	*s = (*s)[:n]
	return s
}

func putScratch[E scratchElem](s *[]E) { scratchPool[E]().Put(s) }

func scratchPool[E scratchElem]() *sync.Pool {
	switch any(*new(E)).(type) {
	case float32:
		return &scratch32
	case float64:
		return &scratch64
	}
	return &scratchInts
}
