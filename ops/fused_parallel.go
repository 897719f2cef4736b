package ops

import (
	"runtime"

	"github.com/plumbml/plumb/internal/par"
)

// minParallelWork is the amount of work (multiply-adds or elements touched)
// below which the fused kernels stay on the caller's goroutine: handing
// tasks to a helper and joining it costs about what one core does in a
// few microseconds.
const minParallelWork = 1 << 16

// parallelTasks runs tasks 0..n-1 on up to GOMAXPROCS cores (internal/par),
// each taking the next task in turn (so a core slowed by other work takes
// fewer), or on the caller's goroutine when work is below
// minParallelWork. newWorker is called once per core that takes a task and
// returns the function that runs one task with that core's scratch
// buffers.
func parallelTasks(n, work int, newWorker func() func(task int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if work < minParallelWork || workers <= 1 {
		if n > 0 {
			run := newWorker()
			for t := 0; t < n; t++ {
				run(t)
			}
		}
		return
	}
	par.Run(n, workers, &taskJob{newWorker: newWorker, runs: make([]func(int), workers)})
}

// taskJob is parallelTasks' par.Job: each worker makes its task runner on
// its first task.
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

// rowsPerTaskElems aims each task of parallelRows at about this many elements,
// enough to amortise taking a task and few enough that both cores get
// work on a few hundred KiB.
const rowsPerTaskElems = 1 << 14

// parallelRows runs the rows 0..rows-1, each of rowSize elements, as
// ranges [lo, hi) of consecutive rows on all cores (parallelTasks). The
// ranges depend only on the sizes, never on the scheduling, so a caller
// that sums per range and then over ranges in order is deterministic.
func parallelRows(rows, rowSize int, newWorker func() func(lo, hi int)) {
	per := max(1, rowsPerTaskElems/max(rowSize, 1))
	tasks := (rows + per - 1) / per
	parallelTasks(tasks, rows*rowSize, func() func(int) {
		run := newWorker()
		return func(t int) { run(t*per, min((t+1)*per, rows)) }
	})
}
