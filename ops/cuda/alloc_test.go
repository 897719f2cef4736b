package cuda

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeBackend hands out fake addresses and fails an allocation that would
// take more than limit bytes in all (0: no limit).
type fakeBackend struct {
	next   uintptr
	live   map[uintptr]int
	limit  int
	allocs int
}

var errFakeOOM = errors.New("fake out of memory")

func newFakeBackend(limit int) *fakeBackend {
	return &fakeBackend{next: 0x1000, live: map[uintptr]int{}, limit: limit}
}

func (f *fakeBackend) alloc(n int) (uintptr, error) {
	used := 0
	for _, s := range f.live {
		used += s
	}
	if f.limit > 0 && used+n > f.limit {
		return 0, errFakeOOM
	}
	p := f.next
	f.next += uintptr(n)
	f.live[p] = n
	f.allocs++
	return p, nil
}

func (f *fakeBackend) free(p uintptr) error {
	if _, ok := f.live[p]; !ok {
		return errors.New("fake double free")
	}
	delete(f.live, p)
	return nil
}

func TestClassSize(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{1, 512}, {512, 512}, {513, 1024}, {4000, 4096}, {1 << 20, 1 << 20},
		{1<<20 + 1, 2 << 20}, {2 << 20, 2 << 20}, {2<<20 + 1, 4 << 20}, {5 << 20, 6 << 20},
	} {
		require.Equal(t, c.want, classSize(c.n), "classSize(%d)", c.n)
		require.GreaterOrEqual(t, classSize(c.n), c.n)
	}
}

// After one step of allocations and frees, repeating the same step draws
// nothing more from the backend.
func TestAllocatorReusesAfterWarmUp(t *testing.T) {
	be := newFakeBackend(0)
	a := newAllocator(be)
	step := func() {
		var ps []uintptr
		for _, n := range []int{100, 4096, 3 << 20, 100, 70000} {
			p, err := a.Alloc(n)
			require.NoError(t, err)
			require.NotZero(t, p)
			ps = append(ps, p)
		}
		for _, p := range ps {
			require.NoError(t, a.Free(p))
		}
	}
	step()
	warm := a.Stats()
	require.Equal(t, 5, warm.DriverAllocs)
	require.Zero(t, warm.InUse)
	require.Equal(t, 512*2+4096+(4<<20)+(128<<10), warm.Cached)
	for range 3 {
		step()
	}
	s := a.Stats()
	require.Equal(t, warm.DriverAllocs, s.DriverAllocs, "no driver allocation after warm-up")
	require.Equal(t, 15, s.Hits)
	require.Equal(t, warm.Cached, s.Cached)
	require.Equal(t, 5, be.allocs)
}

func TestAllocatorLiveBlocksAreDistinct(t *testing.T) {
	a := newAllocator(newFakeBackend(0))
	p, err := a.Alloc(1000)
	require.NoError(t, err)
	q, err := a.Alloc(1000)
	require.NoError(t, err)
	require.NotEqual(t, p, q)
	require.Equal(t, 2048, a.Stats().InUse)
	require.NoError(t, a.Free(p))
	r, err := a.Alloc(600) // same class as p: reuses it
	require.NoError(t, err)
	require.Equal(t, p, r)
}

func TestAllocatorZeroAndBadFrees(t *testing.T) {
	a := newAllocator(newFakeBackend(0))
	p, err := a.Alloc(0)
	require.NoError(t, err)
	require.Zero(t, p)
	require.NoError(t, a.Free(0))
	_, err = a.Alloc(-1)
	require.Error(t, err)

	p, err = a.Alloc(10)
	require.NoError(t, err)
	require.NoError(t, a.Free(p))
	require.ErrorContains(t, a.Free(p), "not an allocated block")
	require.ErrorContains(t, a.Free(0x7), "not an allocated block")
}

// An allocation that fails while the cache holds memory releases the cache
// and succeeds; one that fails with an empty cache returns the error.
func TestAllocatorReleasesCacheOnOOM(t *testing.T) {
	be := newFakeBackend(8 << 20)
	a := newAllocator(be)
	p, err := a.Alloc(6 << 20)
	require.NoError(t, err)
	require.NoError(t, a.Free(p))
	q, err := a.Alloc(4 << 20) // another class; fits only once the 6 MiB block is gone
	require.NoError(t, err)
	s := a.Stats()
	require.Equal(t, 1, s.DriverFrees)
	require.Zero(t, s.Cached)
	require.Equal(t, 4<<20, s.InUse)

	_, err = a.Alloc(6 << 20)
	require.ErrorIs(t, err, errFakeOOM)
	require.NoError(t, a.Free(q))
}

func TestAllocatorRelease(t *testing.T) {
	be := newFakeBackend(0)
	a := newAllocator(be)
	p, _ := a.Alloc(100)
	q, _ := a.Alloc(5000)
	require.NoError(t, a.Free(p))
	require.NoError(t, a.Release())
	require.Len(t, be.live, 1, "the block in use stays")
	s := a.Stats()
	require.Equal(t, 1, s.DriverFrees)
	require.Zero(t, s.Cached)
	require.NoError(t, a.Free(q))
}

func TestErrorNamesKernelAndShape(t *testing.T) {
	base := errors.New("CUDA_ERROR_ILLEGAL_ADDRESS")
	e := &Error{Call: "cuLaunchKernel", Kernel: "softmax_fwd", Grid: [3]int{128, 1, 1}, Block: [3]int{256, 1, 1}, Err: base}
	require.Equal(t, "cuda: cuLaunchKernel softmax_fwd grid [128 1 1] block [256 1 1] shared 0: CUDA_ERROR_ILLEGAL_ADDRESS", e.Error())
	require.ErrorIs(t, e, base)
	e = &Error{Call: "cuMemAlloc", Detail: "1024 bytes", Err: base}
	require.Equal(t, "cuda: cuMemAlloc (1024 bytes): CUDA_ERROR_ILLEGAL_ADDRESS", e.Error())
}
