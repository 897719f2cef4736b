package ops

import (
	"runtime"
	"slices"
	"sync"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "rnn_final_state", Inputs: []string{"states", "init"}, Grads: []int{0, 1},
		Make: MakeOp(func(a RNNFinalStateAttrs) Op { return RNNFinalStateOp(a.Offsets, a.Reverse) }), CUDA: DeviceFallback})
}

// RNNFinalStateAttrs are rnn_final_state's attributes: the ragged batch's
// offsets and whether the recurrence ran in reverse.
type RNNFinalStateAttrs struct {
	Offsets []int `json:"offsets"`
	Reverse bool  `json:"reverse"`
}

// rnnSchedule is how the fused recurrent ops (lstm, gru) walk a ragged
// batch without padding: the sequences are sorted by length, longest first
// (stably, so equal lengths keep their order), and at time step t only the
// first active[t] of them, those longer than t, take part. The active rows
// of the state are thus always a prefix of a packed [B, H] buffer, and one
// GEMM per step serves every active sequence (cuDNN's packed-sequence
// layout, PyTorch's PackedSequence with sorted lengths). Empty sequences
// never become active; length-1 sequences take part in step 0 only.
type rnnSchedule struct {
	off     []int // the batch's offsets
	order   []int // order[j] is the j-th longest sequence
	active  []int // active[t] = number of sequences with length > t
	reverse bool
	runs    [][2]int // split's buffer
	cellOff []int    // cellOffsets' buffer
}

// newRNNSchedule validates offsets against the rows of values (errors name
// op and in) and returns their schedule.
func newRNNSchedule(op string, in []*tensor.Tensor, values *tensor.Tensor, offsets []int, reverse bool) (*rnnSchedule, error) {
	s := new(rnnSchedule)
	return s, s.init(op, in, values, offsets, reverse)
}

// schedules pools the schedules of forward passes that save nothing for
// a backward pass (ForwardInto), so that their buffers are reused.
var schedules = sync.Pool{New: func() any { return new(rnnSchedule) }}

// init validates offsets against the rows of values (errors name op and
// in) and makes s their schedule, reusing its buffers: once they have
// grown to a batch's size, init allocates nothing.
func (s *rnnSchedule) init(op string, in []*tensor.Tensor, values *tensor.Tensor, offsets []int, reverse bool) error {
	if values.Rank() < 1 {
		return Errorf(op, in, "want ragged values [total, ...]")
	}
	if err := checkOffsets(op, in, offsets, values.Dim(0)); err != nil {
		return err
	}
	b := len(offsets) - 1
	s.off, s.reverse = offsets, reverse
	s.order = resize(s.order, b)
	for i := range s.order {
		s.order[i] = i
	}
	slices.SortStableFunc(s.order, func(p, q int) int { return s.len(q) - s.len(p) })
	s.active = s.active[:0]
	if b > 0 {
		s.active = resize(s.active, s.len(s.order[0]))
		clear(s.active)
		for _, q := range s.order {
			for t := 0; t < s.len(q); t++ {
				s.active[t]++
			}
		}
	}
	return nil
}

// cellOffsets returns the offsets 0, 1, ..., B that make a cell op's
// batch x [B, In] a ragged batch of B one-step sequences, in s's buffer.
func (s *rnnSchedule) cellOffsets(x *tensor.Tensor) []int {
	b := 0
	if x.Rank() >= 1 {
		b = x.Dim(0)
	}
	s.cellOff = resize(s.cellOff, b+1)
	for i := range s.cellOff {
		s.cellOff[i] = i
	}
	return s.cellOff
}

// resize returns buf with length n, reallocated only when its capacity is
// short.
func resize(buf []int, n int) []int {
	if cap(buf) < n {
		return make([]int, n)
	}
	return buf[:n]
}

func (s *rnnSchedule) len(q int) int { return s.off[q+1] - s.off[q] }

// batch is the number of sequences.
func (s *rnnSchedule) batch() int { return len(s.order) }

// minRunRows is the fewest sequences per core a batch needs to be split
// (split): on average a run's steps then multiply a few rows at once.
const minRunRows = 8

// split cuts the sequences, in the schedule's order, into one contiguous
// run [lo, hi) per core, of about equal steps, for recurrent kernels that
// run each run through every time step on its own core: the sequences of
// a batch are independent, so the cores then meet once per layer instead
// of twice per step, which at batch 32 and 256 units cost about a quarter
// of the layer's time at 2 threads. A run ends where its steps reach the
// next core's share of the total, so a run of long sequences holds fewer
// of them. It returns nil, run the batch as one, on one core or below
// minRunRows sequences per core.
func (s *rnnSchedule) split() [][2]int {
	b := s.batch()
	workers := min(runtime.GOMAXPROCS(0), b/minRunRows)
	if workers < 2 {
		return nil
	}
	total := s.off[len(s.off)-1]
	runs := s.runs[:0]
	lo, steps := 0, 0
	for j := 0; j < b && len(runs) < workers-1; j++ {
		steps += s.len(s.order[j])
		k := len(runs) + 1
		if steps*workers >= total*k && b-(j+1) >= workers-k {
			runs = append(runs, [2]int{lo, j + 1})
			lo = j + 1
		}
	}
	if len(runs) == 0 {
		return nil
	}
	s.runs = append(runs, [2]int{lo, b})
	return s.runs
}

// rnnPass is one pass of a recurrent kernel over a batch (an LSTM's or a
// GRU's forward or backward pass), which eachRun drives: run takes run r
// through every step, and rows does phase phase of step t's gate work
// for the sequences [lo, hi) of the schedule's order (rnnRun.each). rows
// may run on several cores at once, for disjoint rows or runs.
type rnnPass interface {
	run(r rnnRun)
	rows(phase, t, lo, hi int)
}

// rnnDriver is what eachRun and rnnRun.each hand to par.Run: a pass keeps
// one in its own pooled state, so that a pass allocates nothing to spread
// its runs, or a step's rows, over the cores (par.Run takes a Job, and a
// pointer into the pass is one without a new closure).
type rnnDriver struct {
	pass rnnPass
	s    *rnnSchedule
	runs [][2]int // the runs of a split batch
	// The step of a parallel run in progress: phase phase of step t for
	// sequences [lo, lo+n), per of them a task.
	phase, t, lo, n, per int
}

// runsJob is eachRun's par.Job: part i is run i of a split batch.
type runsJob rnnDriver

func (j *runsJob) Do(_, i int) {
	j.pass.run(rnnRun{lo: j.runs[i][0], hi: j.runs[i][1], serial: true, d: (*rnnDriver)(j)})
}

// stepJob is rnnRun.each's par.Job: part i is the i-th task of rows.
type stepJob rnnDriver

func (j *stepJob) Do(_, i int) {
	lo := j.lo + i*j.per
	j.pass.rows(j.phase, j.t, lo, min(lo+j.per, j.lo+j.n))
}

// rnnRun is the part of a batch that a recurrent kernel takes through
// every step at once: sequences [lo, hi) of the schedule's order, on the
// calling goroutine alone (serial: a core's run of a split batch) or with
// each step's products and rows spread over the cores.
type rnnRun struct {
	lo, hi int
	serial bool
	d      *rnnDriver
}

// eachRun runs pass p over schedule s with driver d (p's own): one run
// per core when the batch splits (split) and may (splittable), each taken
// by the next free core, else the whole batch as one parallel run. work
// is the recurrence's multiply-adds, which decide whether the runs go to
// the cores at all (par.Tasks' rule: below par.MinWork they stay on the
// caller).
func eachRun(d *rnnDriver, p rnnPass, s *rnnSchedule, work int, splittable bool) {
	d.pass, d.s = p, s
	if runs := s.split(); runs != nil && splittable {
		d.runs = runs
		if work < par.MinWork {
			for i := range runs {
				(*runsJob)(d).Do(0, i)
			}
			return
		}
		par.Run(len(runs), len(runs), (*runsJob)(d))
		return
	}
	p.run(rnnRun{0, s.batch(), false, d})
}

// active is how many of the run's sequences take step t: the step's
// active ones (a prefix of the order) that fall inside the run.
func (r rnnRun) active(s *rnnSchedule, t int) int { return max(0, min(s.active[t], r.hi)-r.lo) }

// each runs phase phase of step t for the run's first n sequences (from
// lo), each costing rowWork: on the caller for a serial run, else spread
// over the cores in tasks of consecutive rows once they have work enough
// to repay it (par.EachRow's rule).
func (r rnnRun) each(phase, t, n, rowWork int) {
	per := max(1, par.RowTaskElems/max(rowWork, 1))
	tasks := (n + per - 1) / per
	if r.serial || n*rowWork < par.MinWork || tasks < 2 || runtime.GOMAXPROCS(0) < 2 {
		r.d.pass.rows(phase, t, r.lo, r.lo+n)
		return
	}
	d := r.d
	d.phase, d.t, d.lo, d.n, d.per = phase, t, r.lo, n, per
	par.Run(tasks, tasks, (*stepJob)(d))
}

// runGemm computes C = A·B + beta·C over the run's first n rows of the
// batch-row matrices A and C (row strides lda and ldc), with B packed.
func runGemm[T tensor.Float](r rnnRun, n int, a []T, lda int, b *gemm.PackedB[T], beta T, c []T, ldc int) {
	if r.serial {
		gemm.SerialPacked(false, n, 1, a[r.lo*lda:], lda, b, beta, c[r.lo*ldc:], ldc)
		return
	}
	gemm.GemmPacked(false, n, 1, a[r.lo*lda:], lda, b, beta, c[r.lo*ldc:], ldc)
}

// row is the value row of the j-th longest sequence at time step t: its
// t-th step forward, or its t-th step from the end in reverse.
func (s *rnnSchedule) row(j, t int) int {
	q := s.order[j]
	if s.reverse {
		return s.off[q+1] - 1 - t
	}
	return s.off[q] + t
}

// prev is the row processed just before row(j, t), or -1 at t == 0.
func (s *rnnSchedule) prev(j, t int) int {
	switch {
	case t == 0:
		return -1
	case s.reverse:
		return s.row(j, t) + 1
	default:
		return s.row(j, t) - 1
	}
}

// prevStates writes into hp [total, h] the matrix whose row r is the state
// that entered step r: the state output at the previous step (columns
// [0, h) of states, row stride ld), or at a sequence's first step its row
// of init [B, h] (zero when init is nil). Every row is written. A
// sequence's rows are its own outputs shifted by one step, so each is one
// strided copy, the sequences spread over the cores.
func prevStates[T tensor.Float](s *rnnSchedule, h int, states []T, ld int, init, hp []T) {
	seqs := len(s.off) - 1
	par.Rows(seqs, s.off[seqs]*h/max(seqs, 1), func() func(lo, hi int) {
		return func(lo, hi int) {
			for q := lo; q < hi; q++ {
				a, b := s.off[q], s.off[q+1]
				if a == b {
					continue
				}
				first, from, to := a, a, a+1 // forward: row r takes output r-1
				if s.reverse {
					first, from, to = b-1, a+1, a // reverse: row r takes output r+1
				}
				vec.CopyRows(hp[to*h:], h, states[from*ld:], ld, b-a-1, h)
				if init != nil {
					copy(hp[first*h:(first+1)*h], init[q*h:(q+1)*h])
				} else {
					clear(hp[first*h : (first+1)*h])
				}
			}
		}
	})
}

// sortRows copies the rows of the per-sequence [B, h] matrix src into
// dst in the schedule's order (longest first); a nil src leaves dst.
func sortRows[T tensor.Float](s *rnnSchedule, h int, dst, src []T) {
	if src == nil {
		return
	}
	for j, q := range s.order {
		copy(dst[j*h:(j+1)*h], src[q*h:(q+1)*h])
	}
}

// unsortRows is sortRows' inverse: the schedule-ordered rows of src go to
// their sequences' rows of dst; a nil dst (an unwanted gradient) is skipped.
func unsortRows[T tensor.Float](s *rnnSchedule, h int, dst, src []T) {
	if dst == nil {
		return
	}
	for j, q := range s.order {
		copy(dst[q*h:(q+1)*h], src[j*h:(j+1)*h])
	}
}

// sumRows adds the column sums of the [m, n] matrix a into dst, a row at
// a time in vector adds (the same sums, in the same order, as a scalar
// loop over the rows).
func sumRows[T tensor.Float](dst, a []T, m, n int) {
	for i := 0; i < m; i++ {
		vec.Add(dst[:n], a[i*n:(i+1)*n])
	}
}

type rnnFinalStateOp struct {
	offsets []int
	reverse bool
}

// RNNFinalStateOp returns the op that picks each sequence's final state
// from the per-step states [total, S] of a recurrent op run over a ragged
// batch with these offsets: the row of its last step (its first row when
// reverse, since a reverse recurrence ends there), or, for an empty
// sequence, its row of the optional initial state init [B, S] (zeros
// without init), as a Keras RNN with a mask keeps the initial state through
// masked steps. The output is [B, S]; the gradient flows back to the picked
// rows and to init's rows of empty sequences.
func RNNFinalStateOp(offsets []int, reverse bool) Op {
	return &rnnFinalStateOp{offsets: slices.Clone(offsets), reverse: reverse}
}

// RNNFinalState returns the final state of every sequence; init may be
// nil. See RNNFinalStateOp.
func RNNFinalState(states, init *tensor.Tensor, offsets []int, reverse bool) (*tensor.Tensor, error) {
	if init == nil {
		return run(RNNFinalStateOp(offsets, reverse), states)
	}
	return run(RNNFinalStateOp(offsets, reverse), states, init)
}

func (o *rnnFinalStateOp) Name() string { return "rnn_final_state" }

// source returns the states row that holds sequence q's final state, or -1
// for an empty sequence.
func (o *rnnFinalStateOp) source(q int) int {
	switch {
	case o.offsets[q+1] == o.offsets[q]:
		return -1
	case o.reverse:
		return o.offsets[q]
	default:
		return o.offsets[q+1] - 1
	}
}

// check validates the inputs and returns the output's dtype, rows and width.
func (o *rnnFinalStateOp) check(in []*tensor.Tensor) (tensor.DType, int, int, error) {
	if len(in) != 1 && len(in) != 2 {
		return 0, 0, 0, Errorf("rnn_final_state", in, "want inputs states and optional init")
	}
	dt, err := checkFloat("rnn_final_state", in, len(in))
	if err != nil {
		return 0, 0, 0, err
	}
	st := in[0]
	if st.Rank() != 2 {
		return 0, 0, 0, Errorf("rnn_final_state", in, "want states [total, S]")
	}
	if err := checkOffsets("rnn_final_state", in, o.offsets, st.Dim(0)); err != nil {
		return 0, 0, 0, err
	}
	b, n := len(o.offsets)-1, st.Dim(1)
	if len(in) == 2 && !in[1].Shape().Equal(tensor.Shape{b, n}) {
		return 0, 0, 0, Errorf("rnn_final_state", in, "want init [%d %d]", b, n)
	}
	return dt, b, n, nil
}

func (o *rnnFinalStateOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, b, n, err := o.check(in)
	if err != nil {
		return nil, err
	}
	out := tensor.Empty(dt, b, n)
	o.into(out, in)
	return out, nil
}

// ForwardInto is rnn_final_state's Into.
func (o *rnnFinalStateOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, b, n, err := o.check(in)
	if err != nil {
		return err
	}
	if err := checkOut("rnn_final_state", in, out, dt, b, n); err != nil {
		return err
	}
	o.into(out, in)
	return nil
}

// into writes every row of out [B, S]: the picked states row, init's row
// for an empty sequence, or zeros without init.
func (o *rnnFinalStateOp) into(out *tensor.Tensor, in []*tensor.Tensor) {
	for q := 0; q < len(o.offsets)-1; q++ {
		switch r := o.source(q); {
		case r >= 0:
			copyRow(out, q, in[0], r)
		case len(in) == 2:
			copyRow(out, q, in[1], q)
		default:
			clearRow(out, q)
		}
	}
}

// clearRow zeros row q of the matrix t.
func clearRow(t *tensor.Tensor, q int) {
	n := t.Dim(1)
	switch d := t.Raw().(type) {
	case []float32:
		clear(d[q*n : (q+1)*n])
	case []float64:
		clear(d[q*n : (q+1)*n])
	}
}

// copyRow copies row src of the matrix from into row dst of the matrix to
// (both 2-D, of one dtype and width).
func copyRow(to *tensor.Tensor, dst int, from *tensor.Tensor, src int) {
	n := to.Dim(1)
	switch d := to.Raw().(type) {
	case []float32:
		copy(d[dst*n:(dst+1)*n], from.Float32s()[src*n:(src+1)*n])
	case []float64:
		copy(d[dst*n:(dst+1)*n], from.Float64s()[src*n:(src+1)*n])
	}
}

func (o *rnnFinalStateOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := wantedGrads(in, need)
	for q := 0; q < len(o.offsets)-1; q++ {
		switch r := o.source(q); {
		case r >= 0 && grads[0] != nil:
			copyRow(grads[0], r, gout, q)
		case r < 0 && len(in) == 2 && grads[1] != nil:
			copyRow(grads[1], q, gout, q)
		}
	}
	return grads, nil
}

// gateWork is what one unit of a gate kernel costs (its exponentials and
// tanh) in the multiply-adds that par.EachRow weighs work in: the rows of
// one time step are independent, so the recurrent kernels spread them over
// the cores once a step has gate units enough to repay it.
const gateWork = 16

// floatIndex is 0 for float32 and 1 for float64: the index of T's pool in
// a pair of pools of a generic pass state.
func floatIndex[T tensor.Float]() int {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0
	}
	return 1
}

// getPass returns a pass state P from pools (one per element type, index
// i), zeroed; putPass zeroes it, so that no buffer stays reachable from the
// pool, and gives it back.
func getPass[P any](pools *[2]sync.Pool, i int) *P {
	if p, ok := pools[i].Get().(*P); ok {
		return p
	}
	return new(P)
}

func putPass[P any](pools *[2]sync.Pool, i int, p *P) {
	var z P
	*p = z
	pools[i].Put(p)
}
