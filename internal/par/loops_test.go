package par

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every loop covers each index exactly once, below and above MinWork.
func TestLoopsCoverEveryIndexOnce(t *testing.T) {
	tests := []struct {
		name string
		run  func(n, work int, visit func(i int))
	}{
		{name: "Tasks", run: func(n, work int, visit func(int)) {
			Tasks(n, work, func() func(int) { return visit })
		}},
		{name: "Rows", run: func(n, work int, visit func(int)) {
			Rows(n, max(1, work/max(n, 1)), func() func(lo, hi int) {
				return func(lo, hi int) {
					for i := lo; i < hi; i++ {
						visit(i)
					}
				}
			})
		}},
		{name: "EachRow", run: func(n, work int, visit func(int)) {
			EachRow(n, max(1, work/max(n, 1)), visit)
		}},
		{name: "ForBatch", run: func(n, _ int, visit func(int)) {
			ForBatch(n, func(_, lo, hi int) {
				for i := lo; i < hi; i++ {
					visit(i)
				}
			})
		}},
	}
	for _, tc := range tests {
		for _, n := range []int{0, 1, 7, 1000} {
			for _, work := range []int{1, 1 << 22} {
				t.Run(fmt.Sprintf("%s/n=%d/work=%d", tc.name, n, work), func(t *testing.T) {
					seen := make([]atomic.Int32, n)
					tc.run(n, work, func(i int) { seen[i].Add(1) })
					for i := range seen {
						require.Equal(t, int32(1), seen[i].Load(), "index %d", i)
					}
				})
			}
		}
	}
}

// Rows' ranges and ForBatch's runs depend only on the sizes, so that sums
// taken per range and then added in order are deterministic.
func TestRangesDependOnlyOnSizes(t *testing.T) {
	collect := func() (rows, batch map[[2]int]int) {
		var mu sync.Mutex
		rows, batch = map[[2]int]int{}, map[[2]int]int{}
		Rows(5000, 64, func() func(lo, hi int) {
			return func(lo, hi int) { mu.Lock(); rows[[2]int{lo, hi}]++; mu.Unlock() }
		})
		ForBatch(9, func(worker, lo, hi int) { mu.Lock(); batch[[2]int{lo, hi}] = worker; mu.Unlock() })
		return rows, batch
	}
	rows1, batch1 := collect()
	for range 5 {
		rows2, batch2 := collect()
		require.Equal(t, rows1, rows2)
		require.Equal(t, batch1, batch2)
	}
	require.Len(t, batch1, BatchWorkers(9))
}

// Elements covers [0, n) once, in disjoint chunks: as one call below
// MinWork, in chunks over the cores above it.
func TestElementsCoverOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, MinWork - 1, MinWork, 3*RowTaskElems + 5} {
		hits := make([]int32, n)
		var calls atomic.Int32
		Elements(n, func(lo, hi int) {
			calls.Add(1)
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&hits[i], 1)
			}
		})
		for i, h := range hits {
			require.Equal(t, int32(1), h, "n %d element %d", n, i)
		}
		if n < MinWork {
			require.Equal(t, int32(min(n, 1)), calls.Load(), "n %d", n)
		}
	}
}
