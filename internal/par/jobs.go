package par

import (
	"runtime"
	"sync"
)

// The allocation-free forms of the loops: a kernel passes its loop body as
// a job value, a struct of what the body reads (the slices, the sizes)
// with a method that runs a part of the loop, instead of a closure over
// them. A closure that a helper goroutine may call has to live on the
// heap, and so do the variables it captures, at every call; a job value is
// copied into a job of the same type kept from an earlier call (jobPool),
// so the loop costs no allocation once every job type in use has been
// pooled.
//
//	type scaleJob struct{ x []float32; k float32 }
//
//	func (j *scaleJob) Range(_, lo, hi int) { vec.Scale(j.x[lo:hi], j.k) }
//
//	par.ElementsOf(len(x), scaleJob{x, k})
//
// Worker is 0 for the caller and 1 and up for the helpers of this loop, as
// in Job; a worker runs one part at a time, so per-worker state indexed by
// it needs no lock. A job needing scratch per worker takes it from a pool
// (internal/scratch) in the part that uses it.

// RangeJob is a loop body over a range of indices: Range runs [lo, hi) on
// worker.
type RangeJob interface{ Range(worker, lo, hi int) }

// jobPools holds one sync.Pool of *J per job type J, keyed by a nil *J
// boxed in an interface, which is comparable and allocation-free.
var jobPools sync.Map

// getJob returns a pooled *J holding job, and the pool to put it back in
// (putJob).
func getJob[J any](job J) (*J, *sync.Pool) {
	j, p := takeJob[J]()
	*j = job
	return j, p
}

// takeJob returns a pooled *J as it was pooled, or a new zero one, and
// its pool.
func takeJob[J any]() (*J, *sync.Pool) {
	p := poolOf[J]()
	j, _ := p.Get().(*J)
	if j == nil {
		j = new(J)
	}
	return j, p
}

// putJob zeroes j, so that the pool holds no caller's slices, and pools it.
func putJob[J any](j *J, p *sync.Pool) {
	var zero J
	*j = zero
	p.Put(j)
}

// poolOf returns J's pool.
func poolOf[J any]() *sync.Pool {
	key := any((*J)(nil))
	p, ok := jobPools.Load(key)
	if !ok {
		p, _ = jobPools.LoadOrStore(key, new(sync.Pool))
	}
	return p.(*sync.Pool)
}

// TasksOf is Tasks with job.Do(worker, task) as the body: tasks 0..n-1 on
// up to GOMAXPROCS cores, each taking the next task in turn, or all on the
// caller below MinWork work.
func TasksOf[J any, P interface {
	*J
	Job
}](n, work int, job J) {
	j, p := getJob(job)
	TasksDo(n, work, P(j))
	putJob(j, p)
}

// TasksDo is TasksOf for a job the caller already holds on the heap.
func TasksDo(n, work int, job Job) { tasksOn(n, work, runtime.GOMAXPROCS(0), job) }

// tasksOn is TasksDo on at most procs workers.
func tasksOn(n, work, procs int, job Job) {
	workers := min(procs, n)
	if work < MinWork || workers <= 1 {
		for t := 0; t < n; t++ {
			job.Do(0, t)
		}
		return
	}
	Run(n, workers, job)
}

// RowsOf is Rows with job.Range(worker, lo, hi) as the body: ranges of
// about RowTaskElems elements of consecutive rows, claimed by the cores in
// turn. The ranges depend only on rows and rowSize, never on the
// scheduling or the path (serial or parallel), so sums taken per range and
// then over ranges in order are deterministic.
func RowsOf[J any, P interface {
	*J
	RangeJob
}](rows, rowSize int, job J) {
	j, p := getJob(job)
	RowsDo(rows, rowSize, P(j))
	putJob(j, p)
}

// rowsJob maps Rows' task t to its range of rows.
type rowsJob struct {
	per, rows int
	job       RangeJob
}

func (r *rowsJob) Do(worker, t int) {
	r.job.Range(worker, t*r.per, min((t+1)*r.per, r.rows))
}

// RowsDo is RowsOf for a job the caller already holds on the heap.
func RowsDo(rows, rowSize int, job RangeJob) { rowsOn(rows, rowSize, runtime.GOMAXPROCS(0), job) }

// rowsOn is RowsDo on at most procs workers.
func rowsOn(rows, rowSize, procs int, job RangeJob) {
	per := max(1, RowTaskElems/max(rowSize, 1))
	tasks := (rows + per - 1) / per
	r, p := getJob(rowsJob{per: per, rows: rows, job: job})
	tasksOn(tasks, rows*rowSize, procs, r)
	putJob(r, p)
}

// ElementsOf is Elements with job.Range(worker, lo, hi) as the body:
// [0, n) as one range on the caller below MinWork, in chunks of
// RowTaskElems over the cores above it.
func ElementsOf[J any, P interface {
	*J
	RangeJob
}](n int, job J) {
	j, p := getJob(job)
	ElementsDo(n, P(j))
	putJob(j, p)
}

// ElementsDo is ElementsOf for a job the caller already holds on the heap.
func ElementsDo(n int, job RangeJob) {
	if n < MinWork {
		if n > 0 {
			job.Range(0, 0, n)
		}
		return
	}
	RowsDo(n, 1, job)
}

// ForBatchOf is ForBatch with job.Range(run, lo, hi) as the body: images
// [0, n) in BatchWorkers(n) contiguous runs, the worker argument being the
// run's number, so per-run sums follow the runs and not the timing.
func ForBatchOf[J any, P interface {
	*J
	RangeJob
}](n int, job J) {
	j, p := getJob(job)
	ForBatchDo(n, P(j))
	putJob(j, p)
}

// batchRuns maps ForBatch's part to its run of images.
type batchRuns struct {
	n, chunk int
	job      RangeJob
}

func (b *batchRuns) Do(_, part int) {
	b.job.Range(part, min(b.n, part*b.chunk), min(b.n, (part+1)*b.chunk))
}

// ForBatchDo is ForBatchOf for a job the caller already holds on the heap.
func ForBatchDo(n int, job RangeJob) {
	workers := BatchWorkers(n)
	if workers == 1 {
		job.Range(0, 0, n)
		return
	}
	b, p := getJob(batchRuns{n: n, chunk: (n + workers - 1) / workers, job: job})
	Run(workers, workers, b)
	putJob(b, p)
}
