package dist

import (
	"fmt"
	"sync"
	"time"
)

// NewGroup returns size ranks that meet in memory, one Comm per rank, to
// run data-parallel code in one process: each rank's code runs on its own
// goroutine. It is what the pure-Go tests use in place of mpirun. A
// collective that waits longer than timeout for the other ranks fails with
// the same error as the MPI build's watchdog.
func NewGroup(size int, timeout time.Duration) ([]Comm, error) {
	if size < 1 || timeout <= 0 {
		return nil, fmt.Errorf("dist: NewGroup(%d, %v): want at least 1 rank and a positive timeout", size, timeout)
	}
	g := &group{size: size, timeout: timeout}
	cs := make([]Comm, size)
	for r := range cs {
		cs[r] = &member{g: g, rank: r}
	}
	return cs, nil
}

type group struct {
	size    int
	timeout time.Duration
	mu      sync.Mutex
	cur     *round
}

// round is one collective call: what each rank brought, and once all have
// come, what each takes away.
type round struct {
	op      string
	in      [][]byte
	arrived int
	done    chan struct{}
	err     error
}

type member struct {
	g      *group
	rank   int
	broken bool
}

func (m *member) Rank() int { return m.rank }
func (m *member) Size() int { return m.g.size }

// meet adds this rank's in to the current round of op and waits for the
// others; finish, run by the last rank to arrive, computes the outcome
// from every rank's input (rewriting in's entries in place).
func (m *member) meet(op string, in []byte, finish func(in [][]byte) error) (*round, error) {
	if m.broken {
		return nil, fmt.Errorf("dist: rank %d of %d: %s after an earlier collective failed", m.rank, m.g.size, op)
	}
	g := m.g
	g.mu.Lock()
	if g.cur == nil {
		g.cur = &round{op: op, in: make([][]byte, g.size), done: make(chan struct{})}
	}
	r := g.cur
	if r.op != op {
		r.err = fmt.Errorf("dist: ranks disagree on the collective: one called %s, another %s", r.op, op)
	}
	r.in[m.rank] = in
	r.arrived++
	if r.arrived == g.size {
		if r.err == nil {
			r.err = finish(r.in)
		}
		g.cur = nil
		close(r.done)
	}
	g.mu.Unlock()
	t := time.NewTimer(g.timeout)
	defer t.Stop()
	select {
	case <-r.done:
		return r, r.err
	case <-t.C:
		m.broken = true
		return nil, timeoutError(m.rank, g.size, op, g.timeout)
	}
}

func (m *member) AllreduceFloat32(buf []float32) error {
	_, err := m.meet("allreduce float32", bytesOf(buf), func(in [][]byte) error { return sumInto[float32](in) })
	return err
}

func (m *member) AllreduceFloat64(buf []float64) error {
	_, err := m.meet("allreduce float64", bytesOf(buf), func(in [][]byte) error { return sumInto[float64](in) })
	return err
}

// sumInto sums every rank's buffer (viewed as T) into all of them.
func sumInto[T float32 | float64](in [][]byte) error {
	bufs := make([][]T, len(in))
	for r, b := range in {
		bufs[r] = viewAs[T](b)
		if len(bufs[r]) != len(bufs[0]) {
			return fmt.Errorf("dist: allreduce of %d elements on rank 0 but %d on rank %d", len(bufs[0]), len(bufs[r]), r)
		}
	}
	for i := range bufs[0] {
		var s T
		for _, b := range bufs { // rank order, as a reduction tree would fix it
			s += b[i]
		}
		for _, b := range bufs {
			b[i] = s
		}
	}
	return nil
}

func (m *member) Broadcast(buf []byte, root int) error {
	if err := checkRoot(root, m.g.size); err != nil {
		return err
	}
	_, err := m.meet(fmt.Sprintf("broadcast from %d", root), buf, func(in [][]byte) error {
		for r, b := range in {
			if len(b) != len(in[root]) {
				return fmt.Errorf("dist: broadcast of %d bytes from rank %d but rank %d expects %d", len(in[root]), root, r, len(b))
			}
			copy(b, in[root])
		}
		return nil
	})
	return err
}

func (m *member) Allgather(send []byte) ([][]byte, error) {
	r, err := m.meet("allgather", send, func([][]byte) error { return nil })
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(r.in))
	for i, b := range r.in {
		out[i] = append([]byte(nil), b...)
	}
	return out, nil
}

func (m *member) Barrier() error {
	_, err := m.meet("barrier", nil, func([][]byte) error { return nil })
	return err
}

func (m *member) Close() error { return nil }

// timeoutError is the watchdog's message, the same in every build.
func timeoutError(rank, size int, op string, d time.Duration) error {
	return fmt.Errorf("dist: rank %d of %d: %s did not complete within %v (PLUMB_DIST_TIMEOUT): another rank died, hangs, or works alone longer than that", rank, size, op, d)
}
