package par

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countJob records how often each part ran, and fails if a worker number
// is out of range or runs two parts at once.
type countJob struct {
	t       *testing.T
	workers int
	runs    []atomic.Int32
	active  []atomic.Bool
	nested  int // when > 0, each part runs a Run of this many parts inside
	bad     atomic.Int32
}

func newCountJob(t *testing.T, parts, workers int) *countJob {
	return &countJob{t: t, workers: workers, runs: make([]atomic.Int32, parts), active: make([]atomic.Bool, max(workers, 1))}
}

func (j *countJob) Do(worker, part int) {
	if worker < 0 || worker >= len(j.active) || !j.active[worker].CompareAndSwap(false, true) {
		j.bad.Add(1)
		return
	}
	if j.nested > 0 {
		inner := newCountJob(j.t, j.nested, 2)
		Run(j.nested, 2, inner)
		inner.check()
	}
	j.runs[part].Add(1)
	j.active[worker].Store(false)
}

func (j *countJob) check() {
	j.t.Helper()
	require.Zero(j.t, j.bad.Load(), "a worker out of range or running two parts at once")
	for i := range j.runs {
		require.Equal(j.t, int32(1), j.runs[i].Load(), "part %d", i)
	}
}

// Every part runs exactly once, on a worker in range that runs one part
// at a time, whatever the parts and workers asked for.
func TestRunEveryPartOnce(t *testing.T) {
	for _, parts := range []int{0, 1, 2, 3, 17, 1000} {
		for _, workers := range []int{0, 1, 2, 8} {
			t.Run(fmt.Sprintf("parts=%d workers=%d", parts, workers), func(t *testing.T) {
				for range 20 {
					j := newCountJob(t, parts, workers)
					Run(parts, workers, j)
					j.check()
				}
			})
		}
	}
}

// A Run inside a part (a convolution's GEMM inside its batch loop) runs
// on whoever is free and returns.
func TestNestedRun(t *testing.T) {
	j := newCountJob(t, 9, 4)
	j.nested = 5
	Run(9, 4, j)
	j.check()
}

// Runs from several goroutines at once share the helpers: a helper may
// come to a run after its parts are all taken, or still hold a team whose
// caller has returned; every run must still run each of its parts once.
func TestConcurrentRuns(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				parts := 1 + (g*7+i)%23
				j := newCountJob(t, parts, runtime.GOMAXPROCS(0))
				Run(parts, runtime.GOMAXPROCS(0), j)
				j.check()
			}
		})
	}
	wg.Wait()
}

// A helper that has parked (no run for longer than its spin) is woken by the
// next run.
func TestRunAfterHelpersPark(t *testing.T) {
	for range 3 {
		j := newCountJob(t, 64, 2)
		Run(64, 2, j)
		j.check()
		time.Sleep(2 * DefaultSpin)
	}
}
