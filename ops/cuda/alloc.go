package cuda

import (
	"errors"
	"fmt"
	"sync"
)

// backend is the device memory a caching Allocator draws from: the driver's
// cuMemAlloc and cuMemFree on a GPU, a fake in the tests.
type backend interface {
	alloc(bytes int) (uintptr, error)
	free(ptr uintptr) error
}

// Allocator caches freed device blocks in free lists by size class, so a
// training loop, which asks for the same sizes every step, stops calling
// the driver after its first step: cuMemAlloc and cuMemFree synchronise
// the whole device and cost far more than the kernels of a small op.
//
// A request of n bytes takes a block of classSize(n) bytes: a power of two
// from 512 bytes up to 1 MiB, then a multiple of 2 MiB, so a block wastes
// under half of a small request and under 2 MiB of a large one. When the
// driver runs out of memory the allocator returns every cached block and
// tries once more. It is safe for concurrent use.
type Allocator struct {
	be backend

	mu    sync.Mutex
	free  map[int][]uintptr // size class -> cached blocks
	live  map[uintptr]int   // block handed out -> its size class
	stats Stats
}

// Stats counts an Allocator's work since it was made.
type Stats struct {
	DriverAllocs int // blocks obtained from the backend
	DriverFrees  int // blocks returned to the backend
	Hits         int // requests served from the cache
	InUse        int // bytes of the blocks handed out and not yet freed
	Cached       int // bytes of the blocks held in the free lists
}

func newAllocator(be backend) *Allocator {
	return &Allocator{be: be, free: map[int][]uintptr{}, live: map[uintptr]int{}}
}

// Size classes: powers of two from minClass to largeStep/2, then
// multiples of largeStep.
const (
	minClass  = 512
	largeStep = 2 << 20
)

// classSize returns the size of the block that serves a request of n > 0
// bytes.
func classSize(n int) int {
	if n > largeStep/2 {
		return (n + largeStep - 1) / largeStep * largeStep
	}
	c := minClass
	for c < n {
		c <<= 1
	}
	return c
}

// Alloc returns a block of at least n bytes. A zero-byte request returns
// the null pointer and holds nothing, since empty tensors (a ragged batch
// of empty sequences) need no storage.
func (a *Allocator) Alloc(n int) (uintptr, error) {
	if n < 0 {
		return 0, fmt.Errorf("cuda: allocation of %d bytes", n)
	}
	if n == 0 {
		return 0, nil
	}
	size := classSize(n)
	a.mu.Lock()
	defer a.mu.Unlock()
	if list := a.free[size]; len(list) > 0 {
		p := list[len(list)-1]
		a.free[size] = list[:len(list)-1]
		a.stats.Hits++
		a.stats.Cached -= size
		a.handOut(p, size)
		return p, nil
	}
	p, err := a.be.alloc(size)
	if err != nil && a.stats.Cached > 0 {
		// Out of memory, perhaps only because the cache holds it: give the
		// cache back and try once more.
		if rerr := a.releaseLocked(); rerr != nil {
			return 0, errors.Join(err, rerr)
		}
		p, err = a.be.alloc(size)
	}
	if err != nil {
		return 0, err
	}
	a.stats.DriverAllocs++
	a.handOut(p, size)
	return p, nil
}

func (a *Allocator) handOut(p uintptr, size int) {
	a.live[p] = size
	a.stats.InUse += size
}

// Free returns a block from Alloc to the cache. Freeing the null pointer
// does nothing; freeing a block twice, or one Alloc never gave, is an error.
func (a *Allocator) Free(p uintptr) error {
	if p == 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	size, ok := a.live[p]
	if !ok {
		return fmt.Errorf("cuda: free of 0x%x, which is not an allocated block", p)
	}
	delete(a.live, p)
	a.free[size] = append(a.free[size], p)
	a.stats.InUse -= size
	a.stats.Cached += size
	return nil
}

// Release returns every cached block to the backend; blocks in use stay.
// It returns the first backend error, after trying every block.
func (a *Allocator) Release() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.releaseLocked()
}

func (a *Allocator) releaseLocked() error {
	var first error
	for size, list := range a.free {
		for _, p := range list {
			if err := a.be.free(p); err != nil && first == nil {
				first = err
			}
			a.stats.DriverFrees++
			a.stats.Cached -= size
		}
		delete(a.free, size)
	}
	return first
}

// Stats returns the allocator's counters.
func (a *Allocator) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats
}
