// Package par runs the parts of a job on the calling goroutine and on
// helper goroutines kept for the purpose, one per core beyond the first
// (GOMAXPROCS − 1): the parallel loop under Plumb's kernels, GEMM's
// products, the convolutions' batches and the fused row kernels.
//
// Starting a goroutine per parallel loop means waking an idle OS thread
// each time, tens of microseconds to milliseconds on a virtual machine and
// a large part of a model-sized product. A helper instead spins on its box
// for its next task for a while after each one before it parks on a
// channel, as OpenMP runtimes and OpenBLAS spin-wait their threads, and
// every kernel runs on the same helpers, so a spinning helper never holds
// a core that another kernel's goroutine is waiting for.
//
// How long a helper spins adapts to the gaps between its tasks (nextSpin):
// while tasks come within the spin it keeps spinning that long, a task
// that came soon after the helper parked widens the spin to twice that
// gap, and each gap longer than the longest spin halves it, down to a
// floor near a thread's wake-up time. A model whose kernels follow each
// other closely keeps its helpers awake; one that runs a small kernel now
// and then stops paying for spins that find nothing. The longest spin is
// the PLUMB_SPIN environment variable (DefaultSpin when unset; 0 parks
// helpers as soon as they finish).
//
// The spin does not yield (runtime.Gosched): a yielded goroutine waits in
// the global run queue, so a part handed to it waits far longer to be
// picked up than a kernel's part takes to run. A spinning helper holds its
// core from other goroutines for at most its spin, and Go preempts it like
// any goroutine.
//
// The loops (loops.go, jobs.go) come in two forms. Tasks, Rows, Elements,
// EachRow and ForBatch take closures; a closure that a helper may call
// lives on the heap with what it captures, so each call allocates.
// TasksOf, RowsOf, ElementsOf and ForBatchOf take the loop body as a job
// value (a struct with a Do or Range method), which the loop copies into
// a job of that type pooled from an earlier call (one sync.Pool per job
// type): after warm-up they allocate nothing, which is what keeps an
// inference plan's calls (infer) free of allocations. Both forms split the
// work the same way: the parts are claimed dynamically, Rows' ranges and
// ForBatch's runs depend only on the sizes, and a loop inside a part runs
// on whoever is free.
package par

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSpin is the longest a helper spins for its next task before it
// parks, and the longest Run's caller spins for the parts others run
// before it parks, when PLUMB_SPIN is not set: long enough that the
// kernels of a training step, and a caller that the hypervisor stalls for
// a millisecond or two, find the helpers awake.
const DefaultSpin = 2 * time.Millisecond

// minSpinShift sets the floor of a helper's spin: the longest spin over
// 2^minSpinShift, 62.5µs by default, about what waking a parked thread
// costs on a virtual machine, so a helper backed off after long gaps
// still catches a task that follows closely.
const minSpinShift = 5

// maxSpin is the longest spin in nanoseconds, read from PLUMB_SPIN once.
var maxSpin atomic.Int64

func init() {
	d, err := parseSpin(os.Getenv("PLUMB_SPIN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	maxSpin.Store(int64(d))
}

// parseSpin reads PLUMB_SPIN: a Go duration ("500us", "2ms") or "0"; ""
// means DefaultSpin. A bad value gives DefaultSpin and an error saying so.
func parseSpin(s string) (time.Duration, error) {
	if s == "" {
		return DefaultSpin, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return DefaultSpin, fmt.Errorf("plumb: PLUMB_SPIN=%q: want a duration of 0 or more such as 500us or 2ms; using %v", s, DefaultSpin)
	}
	return d, nil
}

// nextSpin is a helper's next spin after a task came gap after the last
// one ended, given the spin it used and the longest spin: unchanged when
// the task came while it spun, twice the gap when the task came soon
// after it parked (a longer spin would have caught it), halved down to
// the floor when the gap was longer than any spin would wait.
func nextSpin(spin, gap, longest time.Duration) time.Duration {
	switch {
	case gap <= spin:
	case gap < longest:
		spin = 2 * gap
	default:
		spin = max(spin/2, longest>>minSpinShift)
	}
	return min(spin, longest)
}

// Job is work cut into parts. Do runs part on worker: 0 is Run's caller,
// 1 and up its helpers for this run. A worker runs one part at a time, so
// state indexed by worker needs no lock.
type Job interface{ Do(worker, part int) }

// Run calls job.Do for every part in [0, parts) on the caller and up to
// workers − 1 helpers (fewer when others are busy with another job), each
// taking the next part in turn, and returns when all have returned. The
// caller always takes parts itself and waits only for parts that are
// running, so a Run inside a part (nested) runs on whoever is free and
// cannot deadlock.
func Run(parts, workers int, job Job) {
	procs := runtime.GOMAXPROCS(0)
	workers = min(workers, parts, procs)
	var t *team
	if workers > 1 {
		t = getTeam()
		t.helpers = claimHelpers(t.helpers[:0], workers-1, procs-1)
	}
	if t == nil || len(t.helpers) == 0 {
		if t != nil {
			putTeam(t)
		}
		for i := range parts {
			job.Do(0, i)
		}
		return
	}
	t.job, t.parts = job, int64(parts)
	t.next.Store(0)
	t.done.Store(0)
	t.refs.Store(int32(1 + len(t.helpers)))
	t.tasks = t.tasks[:0]
	for i := range t.helpers {
		t.tasks = append(t.tasks, task{t: t, worker: 1 + i})
	}
	for i, h := range t.helpers {
		h.give(&t.tasks[i])
	}
	if !t.take(0) {
		start := time.Now()
		spin := time.Duration(maxSpin.Load())
		for i := 1; t.done.Load() != t.parts && (i%1024 != 0 || time.Since(start) < spin); i++ {
		}
		<-t.fin
	}
	t.release()
}

// team is one Run: its parts and the helpers running them. It is pooled,
// so a Run allocates nothing after warm-up.
//
// The caller waits for the parts to be done, not for the helpers it
// handed the job to: a helper that wakes late (parked, or its thread
// descheduled on a loaded machine) finds no part left and only lets go of
// the team, so a Run never waits on a helper that did none of it, and the
// job is never touched after Run returns. The team goes back to the pool
// when the caller and every helper have let go (refs).
type team struct {
	next, done atomic.Int64  // the next part to take; parts finished
	refs       atomic.Int32  // the caller and the helpers still holding the team
	fin        chan struct{} // a helper that finishes the last part says so here
	parts      int64
	job        Job
	helpers    []*helper // claimed for this run
	tasks      []task    // what each helper is given
}

// take runs parts on worker until none is left and says whether it
// finished the last one.
func (t *team) take(worker int) (last bool) {
	for {
		i := t.next.Add(1) - 1
		if i >= t.parts {
			return last
		}
		t.job.Do(worker, int(i))
		if t.done.Add(1) == t.parts {
			last = true
		}
	}
}

// finish is a helper letting go of the team after take, saying so on fin
// when it finished the last part.
func (t *team) finish(last bool) {
	if last {
		t.fin <- struct{}{}
	}
	t.release()
}

// release lets go of the team; the last one out pools it.
func (t *team) release() {
	if t.refs.Add(-1) == 0 {
		putTeam(t)
	}
}

var teams sync.Pool

func getTeam() *team {
	t, ok := teams.Get().(*team)
	if !ok {
		t = &team{fin: make(chan struct{}, 1)}
	}
	return t
}

func putTeam(t *team) {
	t.job = nil // drop the caller's job
	clear(t.helpers)
	clear(t.tasks)
	teams.Put(t)
}

// task is a team handed to a helper, with the worker number it runs as.
type task struct {
	t      *team
	worker int
}

type helper struct {
	busy     atomic.Bool // claimed by a run
	box      atomic.Pointer[task]
	sleeping atomic.Bool
	wake     chan struct{}
	spin     atomic.Int64 // how long it spins next, in nanoseconds (nextSpin); atomic only for tests
}

var (
	helpersMu sync.Mutex
	helpers   atomic.Pointer[[]*helper]
)

// claimHelpers claims up to n idle helpers into dst, starting new ones
// while there are fewer than maxHelpers; helpers busy with another run are
// skipped, since the caller's own goroutine takes parts too.
func claimHelpers(dst []*helper, n, maxHelpers int) []*helper {
	if hs := helpers.Load(); hs != nil {
		for _, h := range *hs {
			if len(dst) == n {
				return dst
			}
			if h.busy.CompareAndSwap(false, true) {
				dst = append(dst, h)
			}
		}
	}
	helpersMu.Lock()
	defer helpersMu.Unlock()
	var all []*helper
	if hs := helpers.Load(); hs != nil {
		all = *hs
	}
	if len(dst) == n || len(all) >= maxHelpers {
		return dst
	}
	for len(dst) < n && len(all) < maxHelpers {
		h := &helper{wake: make(chan struct{}, 1)}
		h.spin.Store(maxSpin.Load())
		h.busy.Store(true)
		go h.loop()
		all = append(all[:len(all):len(all)], h) // readers keep the old slice
		dst = append(dst, h)
	}
	grown := all // declared here so that only a call that grows the set allocates
	helpers.Store(&grown)
	return dst
}

// give hands tk to the claimed helper h.
func (h *helper) give(tk *task) {
	h.box.Store(tk)
	if h.sleeping.CompareAndSwap(true, false) {
		h.wake <- struct{}{}
	}
}

// loop runs the helper. It is free for the next run as soon as no part of
// this one is left, before it lets go of this one, so that a caller that
// returns and at once starts another run (every step of a model) finds it
// free instead of running that product alone.
func (h *helper) loop() {
	for {
		tk := h.await()
		last := tk.t.take(tk.worker)
		h.busy.Store(false)
		tk.t.finish(last)
	}
}

// await returns the next task: spun for up to the helper's spin (the
// clock read every 1024 polls), then parked; the gap until the task came
// sets the next spin. The sleeping flag is set before the last look at the
// box, and give sets the box before clearing the flag, so a task is never
// missed; when both sides see each other, the wake-up token is drained.
func (h *helper) await() *task {
	longest := time.Duration(maxSpin.Load())
	spin := min(time.Duration(h.spin.Load()), longest)
	start := time.Now()
	tk := h.spinFor(start, spin)
	if tk == nil {
		tk = h.park()
	}
	h.spin.Store(int64(nextSpin(spin, time.Since(start), longest)))
	return tk
}

// spinFor polls the box until spin has passed since start and returns its
// task, or nil when none came.
func (h *helper) spinFor(start time.Time, spin time.Duration) *task {
	if spin <= 0 {
		return nil
	}
	for i := 1; i%1024 != 0 || time.Since(start) < spin; i++ {
		if h.box.Load() != nil { // read before swapping: a poll must not write the line give writes
			return h.box.Swap(nil)
		}
	}
	return nil
}

// park sleeps on wake until a task is given and returns it.
func (h *helper) park() *task {
	h.sleeping.Store(true)
	if tk := h.box.Swap(nil); tk != nil {
		if !h.sleeping.CompareAndSwap(true, false) {
			<-h.wake
		}
		return tk
	}
	<-h.wake
	return h.box.Swap(nil)
}
