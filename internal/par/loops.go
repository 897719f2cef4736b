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
// with that core's scratch buffers.
func Tasks(n, work int, newWorker func() func(task int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if work < MinWork || workers <= 1 {
		if n > 0 {
			run := newWorker()
			for t := 0; t < n; t++ {
				run(t)
			}
		}
		return
	}
	Run(n, workers, &taskJob{newWorker: newWorker, runs: make([]func(int), workers)})
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
// and then over ranges in order is deterministic.
func Rows(rows, rowSize int, newWorker func() func(lo, hi int)) {
	per := max(1, RowTaskElems/max(rowSize, 1))
	tasks := (rows + per - 1) / per
	Tasks(tasks, rows*rowSize, func() func(int) {
		run := newWorker()
		return func(t int) { run(t*per, min((t+1)*per, rows)) }
	})
}

// Elements runs fn over [0, n) in contiguous chunks on all cores (Rows,
// RowTaskElems elements a task), or as one call on the caller below
// MinWork elements, for element-wise loops: each element's result is its
// own, so the bits do not depend on the cores.
func Elements(n int, fn func(lo, hi int)) {
	if n < MinWork {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	Rows(n, 1, func() func(lo, hi int) { return fn })
}

// EachRow runs fn(j) for the independent rows [0, n), each costing rowWork,
// spread over the cores (Rows) once the rows have work enough to repay it;
// the recurrent kernels run each time step's batch rows with it.
func EachRow(n, rowWork int, fn func(j int)) {
	Rows(n, rowWork, func() func(lo, hi int) {
		return func(lo, hi int) {
			for j := lo; j < hi; j++ {
				fn(j)
			}
		}
	})
}

// BatchWorkers is the number of runs ForBatch splits n images into.
func BatchWorkers(n int) int { return max(1, min(n, runtime.GOMAXPROCS(0))) }

// ForBatch splits images [0, n) into BatchWorkers(n) contiguous runs and
// calls fn(worker, lo, hi) for each on the cores, worker being the run's
// number, so that per-worker sums follow the runs and not the timing. Runs
// write disjoint images, so kernels built on it are race-free.
func ForBatch(n int, fn func(worker, lo, hi int)) {
	workers := BatchWorkers(n)
	if workers == 1 {
		fn(0, 0, n)
		return
	}
	Run(workers, workers, &batchJob{n: n, chunk: (n + workers - 1) / workers, fn: fn})
}

// batchJob is ForBatch's Job: part i is run i of chunk images.
type batchJob struct {
	n, chunk int
	fn       func(worker, lo, hi int)
}

func (b *batchJob) Do(_, part int) {
	b.fn(part, min(b.n, part*b.chunk), min(b.n, (part+1)*b.chunk))
}
