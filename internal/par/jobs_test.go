package par

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// visitJob marks each index its parts cover, as a Job and as a RangeJob.
type visitJob struct{ seen []atomic.Int32 }

func (v *visitJob) Do(_, i int) { v.seen[i].Add(1) }

func (v *visitJob) Range(_, lo, hi int) {
	for i := lo; i < hi; i++ {
		v.seen[i].Add(1)
	}
}

// rangeLog records every range a loop hands out, with its worker.
type rangeLog struct {
	mu     *sync.Mutex
	ranges map[[2]int]int
}

func (r *rangeLog) Range(worker, lo, hi int) {
	r.mu.Lock()
	r.ranges[[2]int{lo, hi}] = worker
	r.mu.Unlock()
}

// The job forms cover each index exactly once, below and above MinWork, on
// 1, 2 and 4 cores.
func TestJobLoopsCoverEveryIndexOnce(t *testing.T) {
	tests := []struct {
		name string
		run  func(n, work int, seen []atomic.Int32)
	}{
		{"TasksOf", func(n, work int, seen []atomic.Int32) { TasksOf(n, work, visitJob{seen}) }},
		{"RowsOf", func(n, work int, seen []atomic.Int32) { RowsOf(n, max(1, work/max(n, 1)), visitJob{seen}) }},
		{"ElementsOf", func(n, _ int, seen []atomic.Int32) { ElementsOf(n, visitJob{seen}) }},
		{"ForBatchOf", func(n, _ int, seen []atomic.Int32) { ForBatchOf(n, visitJob{seen}) }},
	}
	for _, procs := range []int{1, 2, 4} {
		for _, tc := range tests {
			for _, n := range []int{0, 1, 7, 1000, MinWork + 3} {
				for _, work := range []int{1, 1 << 22} {
					t.Run(fmt.Sprintf("procs=%d/%s/n=%d/work=%d", procs, tc.name, n, work), func(t *testing.T) {
						defer setProcs(procs)()
						seen := make([]atomic.Int32, n)
						tc.run(n, work, seen)
						for i := range seen {
							require.Equal(t, int32(1), seen[i].Load(), "index %d", i)
						}
					})
				}
			}
		}
	}
}

// RowsOf hands out the same ranges as Rows, and ForBatchOf the same runs
// as ForBatch, on every run: sums per range stay deterministic.
func TestJobRangesMatchClosureRanges(t *testing.T) {
	for _, size := range [][2]int{{5000, 64}, {3, 1 << 20}, {MinWork * 3, 1}} {
		var mu sync.Mutex
		want := map[[2]int]int{}
		Rows(size[0], size[1], func() func(lo, hi int) {
			return func(lo, hi int) { mu.Lock(); want[[2]int{lo, hi}] = 0; mu.Unlock() }
		})
		for range 5 {
			got := rangeLog{mu: &mu, ranges: map[[2]int]int{}}
			RowsOf(size[0], size[1], got)
			for r := range got.ranges {
				got.ranges[r] = 0 // the worker that took it is the scheduler's
			}
			require.Equal(t, want, got.ranges, "rows %d of %d", size[0], size[1])
		}
	}
	want := map[[2]int]int{}
	var mu sync.Mutex
	ForBatch(9, func(w, lo, hi int) { mu.Lock(); want[[2]int{lo, hi}] = w; mu.Unlock() })
	got := rangeLog{mu: &mu, ranges: map[[2]int]int{}}
	ForBatchOf(9, got)
	require.Equal(t, want, got.ranges)
}

// A job form nested in another's part runs and returns.
func TestJobLoopsNest(t *testing.T) {
	outer := make([]atomic.Int32, 6)
	inner := make([]atomic.Int32, 6*1000)
	TasksOf(6, 1<<22, nestJob{outer, inner})
	for i := range outer {
		require.Equal(t, int32(1), outer[i].Load())
	}
	for i := range inner {
		require.Equal(t, int32(1), inner[i].Load())
	}
}

type nestJob struct{ outer, inner []atomic.Int32 }

func (n *nestJob) Do(_, t int) {
	RowsOf(1000, 1<<10, visitJob{n.inner[t*1000 : (t+1)*1000]})
	n.outer[t].Add(1)
}

// setProcs sets GOMAXPROCS and returns what restores it.
func setProcs(n int) func() {
	old := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(old) }
}
