package par

import "runtime"

// The parallel loops the kernels are written with, all on Run's helpers.

// MinWork is the amount of work (multiply-adds or elements touched) below
// which Tasks stays on the caller's goroutine: handing tasks to a helper
// and joining it costs about what one core does in a few microseconds.
const MinWork = 1 << 16

// Tasks runs tasks 0..n-1 on up to GOMAXPROCS cores, each taking the next
// task in turn (so a core slowed by other work takes fewer), or on the
// caller's goroutine when work is below MinWork. newWorker is called once
// per core that takes a task and returns the function that runs one task
// with that core's scratch buffers. The closures cost allocations at every
// call; TasksOf is the allocation-free form.
func Tasks(n, work int, newWorker func() func(task int)) {
	if n <= 0 {
		return
	}
	j, pool := takeJob[taskJob]() // runs keeps its array from the last call
	procs := runtime.GOMAXPROCS(0)
	j.newWorker, j.runs = newWorker, grow(j.runs, min(procs, n))
	tasksOn(n, work, procs, j)
	clear(j.runs)
	j.newWorker = nil
	pool.Put(j)
}

// grow returns s with n zeroed elements, reusing its array when it can.
func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// taskJob is Tasks' Job: each worker makes its task runner on its first
// task.
type taskJob struct {
	newWorker func() func(task int)
	runs      []func(task int)
}

func (j *taskJob) Do(worker, task int) {
	if j.runs[worker] == nil {
		j.runs[worker] = j.newWorker()
	}
	j.runs[worker](task)
}

// RowTaskElems aims each task of Rows at about this many elements, enough
// to amortise taking a task and few enough that every core gets work on a
// few hundred KiB.
const RowTaskElems = 1 << 14

// Rows runs the rows 0..rows-1, each of rowSize elements, as ranges
// [lo, hi) of consecutive rows on all cores (Tasks). The ranges depend only
// on the sizes, never on the scheduling, so a caller that sums per range
// and then over ranges in order is deterministic. RowsOf is the
// allocation-free form.
func Rows(rows, rowSize int, newWorker func() func(lo, hi int)) {
	if rows <= 0 {
		return
	}
	per := max(1, RowTaskElems/max(rowSize, 1))
	j, pool := takeJob[rowsFn]() // runs keeps its array from the last call
	procs := runtime.GOMAXPROCS(0)
	j.newWorker, j.runs = newWorker, grow(j.runs, min(procs, (rows+per-1)/per))
	rowsOn(rows, rowSize, procs, j)
	clear(j.runs)
	j.newWorker = nil
	pool.Put(j)
}

// rowsFn is Rows' RangeJob: each worker makes its range runner on its
// first range.
type rowsFn struct {
	newWorker func() func(lo, hi int)
	runs      []func(lo, hi int)
}

func (j *rowsFn) Range(worker, lo, hi int) {
	if j.runs[worker] == nil {
		j.runs[worker] = j.newWorker()
	}
	j.runs[worker](lo, hi)
}

// Elements runs fn over [0, n) in contiguous chunks on all cores (Rows,
// RowTaskElems elements a task), or as one call on the caller below
// MinWork elements, for element-wise loops: each element's result is its
// own, so the bits do not depend on the cores. ElementsOf is the
// allocation-free form.
func Elements(n int, fn func(lo, hi int)) {
	if n < MinWork {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	RowsOf(n, 1, rangeFn{fn})
}

// rangeFn runs a closure over each range.
type rangeFn struct{ fn func(lo, hi int) }

func (r *rangeFn) Range(_, lo, hi int) { r.fn(lo, hi) }

// EachRow runs fn(j) for the independent rows [0, n), each costing rowWork,
// spread over the cores (Rows) once the rows have work enough to repay it;
// the recurrent kernels run each time step's batch rows with it.
func EachRow(n, rowWork int, fn func(j int)) {
	RowsOf(n, rowWork, eachRowFn{fn})
}

// eachRowFn runs a closure on each row of a range.
type eachRowFn struct{ fn func(j int) }

func (e *eachRowFn) Range(_, lo, hi int) {
	for j := lo; j < hi; j++ {
		e.fn(j)
	}
}

// BatchWorkers is the number of runs ForBatch splits n images into.
func BatchWorkers(n int) int { return max(1, min(n, runtime.GOMAXPROCS(0))) }

// ForBatch splits images [0, n) into BatchWorkers(n) contiguous runs and
// calls fn(worker, lo, hi) for each on the cores, worker being the run's
// number, so that per-worker sums follow the runs and not the timing. Runs
// write disjoint images, so kernels built on it are race-free. ForBatchOf
// is the allocation-free form.
func ForBatch(n int, fn func(worker, lo, hi int)) {
	if BatchWorkers(n) == 1 {
		fn(0, 0, n)
		return
	}
	ForBatchOf(n, batchFn{fn})
}

// batchFn runs a closure on each run of images.
type batchFn struct{ fn func(worker, lo, hi int) }

func (b *batchFn) Range(worker, lo, hi int) { b.fn(worker, lo, hi) }
