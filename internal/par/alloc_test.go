//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean nothing under -race; this file is built without it.

package par

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

type nopJob struct{}

func (nopJob) Do(worker, part int) {}

// After warm-up a Run's team comes from the pool: Run allocates nothing.
func TestRunAllocatesNothing(t *testing.T) {
	var j nopJob
	Run(8, 2, j)
	require.Zero(t, testing.AllocsPerRun(50, func() { Run(8, 2, j) }))
}

// sumJob adds its indices into per-worker sums: a loop body that reads a
// slice, as the kernels' do.
type sumJob struct{ sums []int64 }

func (s *sumJob) Do(worker, i int) { s.sums[worker] += int64(i) }

func (s *sumJob) Range(worker, lo, hi int) {
	for i := lo; i < hi; i++ {
		s.sums[worker] += int64(i)
	}
}

// After warm-up the job forms of the loops allocate nothing, serial and
// parallel, on 1 and 2 cores, and the closure forms allocate only what
// their callers' closures do.
func TestJobLoopsAllocateNothing(t *testing.T) {
	sums := make([]int64, 8)
	big := 4 * MinWork
	tests := []struct {
		name string
		run  func()
	}{
		{"TasksOf", func() { TasksOf(64, big, sumJob{sums}) }},
		{"TasksOf/serial", func() { TasksOf(64, 1, sumJob{sums}) }},
		{"RowsOf", func() { RowsOf(big, 1, sumJob{sums}) }},
		{"RowsOf/serial", func() { RowsOf(100, 1, sumJob{sums}) }},
		{"ElementsOf", func() { ElementsOf(big, sumJob{sums}) }},
		{"ElementsOf/serial", func() { ElementsOf(100, sumJob{sums}) }},
		{"ForBatchOf", func() { ForBatchOf(64, sumJob{sums}) }},
	}
	for _, procs := range []int{1, 2} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("procs=%d/%s", procs, tc.name), func(t *testing.T) {
				defer setProcs(procs)()
				tc.run()
				require.Zero(t, testing.AllocsPerRun(50, tc.run))
			})
		}
	}
	// A closure that captures nothing is static: the closure forms add no
	// allocation of their own.
	defer setProcs(2)()
	static := []struct {
		name string
		run  func()
	}{
		{"Tasks", func() { Tasks(64, big, func() func(int) { return func(int) {} }) }},
		{"Rows", func() { Rows(big, 1, func() func(lo, hi int) { return func(lo, hi int) {} }) }},
		{"Elements", func() { Elements(big, func(lo, hi int) {}) }},
		{"EachRow", func() { EachRow(big, 1, func(int) {}) }},
		{"ForBatch", func() { ForBatch(64, func(w, lo, hi int) {}) }},
	}
	for _, tc := range static {
		tc.run()
		require.Zero(t, testing.AllocsPerRun(50, tc.run), tc.name)
	}
}
