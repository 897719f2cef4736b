//go:build mpi

package dist

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include <mpi.h>

// Open MPI's own handlers for SIGSEGV, SIGBUS, SIGFPE and SIGABRT would
// take those signals from the Go runtime (which turns a nil dereference
// into a panic), so they are switched off before MPI_Init.
static int plumb_init(int *provided) {
	setenv("OMPI_MCA_opal_signal", "", 0);
	int err = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, provided);
	if (err != MPI_SUCCESS) return err;
	// Errors come back as codes (and become Go errors) instead of
	// aborting the job from inside the library.
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int plumb_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int plumb_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int plumb_sum_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int plumb_sum_f64(double *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int plumb_bcast(void *buf, int n, int root) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD);
}
static int plumb_allgather_int64(long long *one, long long *all) {
	return MPI_Allgather(one, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, MPI_COMM_WORLD);
}
static int plumb_allgatherv(void *send, int n, void *recv, int *counts, int *displs) {
	return MPI_Allgatherv(send, n, MPI_BYTE, recv, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
}
static int plumb_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int plumb_finalize(void) { return MPI_Finalize(); }
static void plumb_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static void plumb_error_string(int code, char *s, int *n) { MPI_Error_string(code, s, n); }
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// MPI reports whether this build talks to MPI.
const MPI = true

// maxCount is the most elements one MPI call takes (its counts are C ints);
// longer buffers go in pieces.
const maxCount = 1 << 30

// world is MPI_COMM_WORLD. Every MPI call runs on one goroutine locked to
// the OS thread that called MPI_Init_thread (MPI_THREAD_FUNNELED); the
// caller waits for it with a deadline, which is the watchdog.
type world struct {
	rank, size int
	timeout    time.Duration
	calls      chan func()
	mu         sync.Mutex
	broken     error // the first timeout; later calls fail at once
	closed     bool
}

var (
	openOnce  sync.Once
	openWorld *world
	openErr   error
)

// Open joins MPI_COMM_WORLD (MPI_Init_thread once per process; later calls
// return the same group). It also installs a SIGTERM handler that prints
// which rank was terminated: mpirun ends every rank with SIGTERM when one
// rank dies, so a rank that dies makes the others exit with that message
// at once, and a rank that hangs makes the others' collectives fail after
// Timeout (the watchdog), after which they exit and mpirun ends the job.
func Open() (Comm, error) {
	openOnce.Do(func() { openWorld, openErr = open() })
	if openErr != nil {
		return nil, openErr
	}
	return openWorld, nil
}

func open() (*world, error) {
	timeout, err := Timeout()
	if err != nil {
		return nil, err
	}
	w := &world{timeout: timeout, calls: make(chan func())}
	started := make(chan error)
	go func() {
		runtime.LockOSThread() // MPI stays on this thread for the process's life
		var provided, rank, size C.int
		if code := C.plumb_init(&provided); code != C.MPI_SUCCESS {
			started <- mpiError("MPI_Init_thread", code)
			return
		}
		C.plumb_rank(&rank)
		C.plumb_size(&size)
		w.rank, w.size = int(rank), int(size)
		started <- nil
		for f := range w.calls {
			f()
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	if n := Launched(); n > 0 && n != w.size {
		return nil, fmt.Errorf("dist: the launcher announced %d processes but MPI_COMM_WORLD has %d", n, w.size)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		s := <-term
		fmt.Fprintf(os.Stderr, "dist: rank %d of %d: ended by %v (SIGTERM) from the launcher: mpirun ends every rank when one fails; look above for the first rank that failed\n", w.rank, w.size, s)
		os.Exit(1)
	}()
	return w, nil
}

func mpiError(what string, code C.int) error {
	buf := make([]byte, C.MPI_MAX_ERROR_STRING)
	var n C.int
	C.plumb_error_string(code, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return fmt.Errorf("dist: %s failed: %s (MPI error %d)", what, string(buf[:n]), int(code))
}

func (w *world) Rank() int { return w.rank }
func (w *world) Size() int { return w.size }

// do runs f on the MPI thread and waits for it at most the timeout.
func (w *world) do(op string, f func() error) error {
	w.mu.Lock()
	broken, closed := w.broken, w.closed
	w.mu.Unlock()
	switch {
	case broken != nil:
		return fmt.Errorf("dist: rank %d of %d: %s after an earlier collective failed: %w", w.rank, w.size, op, broken)
	case closed:
		return fmt.Errorf("dist: rank %d of %d: %s after Close", w.rank, w.size, op)
	}
	done := make(chan error, 1)
	t := time.NewTimer(w.timeout)
	defer t.Stop()
	select {
	case w.calls <- func() { done <- f() }:
	case <-t.C: // the MPI thread is still in an earlier call
		return w.fail(op)
	}
	select {
	case err := <-done:
		return err
	case <-t.C:
		return w.fail(op)
	}
}

func (w *world) fail(op string) error {
	err := timeoutError(w.rank, w.size, op, w.timeout)
	w.mu.Lock()
	w.broken = err
	w.mu.Unlock()
	return err
}

func check(what string, code C.int) error {
	if code != C.MPI_SUCCESS {
		return mpiError(what, code)
	}
	return nil
}

// inPieces calls call on buf in pieces of at most maxCount elements.
func inPieces[T any](what string, buf []T, call func(piece []T) C.int) error {
	for len(buf) > 0 {
		n := min(len(buf), maxCount)
		if err := check(what, call(buf[:n])); err != nil {
			return err
		}
		buf = buf[n:]
	}
	return nil
}

func (w *world) AllreduceFloat32(buf []float32) error {
	return w.do(fmt.Sprintf("allreduce of %d float32", len(buf)), func() error {
		return inPieces("MPI_Allreduce", buf, func(p []float32) C.int {
			return C.plumb_sum_f32((*C.float)(unsafe.Pointer(&p[0])), C.int(len(p)))
		})
	})
}

func (w *world) AllreduceFloat64(buf []float64) error {
	return w.do(fmt.Sprintf("allreduce of %d float64", len(buf)), func() error {
		return inPieces("MPI_Allreduce", buf, func(p []float64) C.int {
			return C.plumb_sum_f64((*C.double)(unsafe.Pointer(&p[0])), C.int(len(p)))
		})
	})
}

func (w *world) Broadcast(buf []byte, root int) error {
	if err := checkRoot(root, w.size); err != nil {
		return err
	}
	return w.do(fmt.Sprintf("broadcast of %d bytes from rank %d", len(buf), root), func() error {
		return inPieces("MPI_Bcast", buf, func(p []byte) C.int {
			return C.plumb_bcast(unsafe.Pointer(&p[0]), C.int(len(p)), C.int(root))
		})
	})
}

func (w *world) Allgather(send []byte) ([][]byte, error) {
	var out [][]byte
	err := w.do(fmt.Sprintf("allgather of %d bytes", len(send)), func() error {
		one := C.longlong(len(send))
		lens := make([]C.longlong, w.size)
		if err := check("MPI_Allgather", C.plumb_allgather_int64(&one, &lens[0])); err != nil {
			return err
		}
		counts, displs := make([]C.int, w.size), make([]C.int, w.size)
		total := 0
		for r, n := range lens {
			if n < 0 || int64(total)+int64(n) > math.MaxInt32 {
				return fmt.Errorf("dist: allgather of %d bytes from rank %d: more than 2 GiB in all", int64(n), r)
			}
			counts[r], displs[r] = C.int(n), C.int(total)
			total += int(n)
		}
		recv := make([]byte, total+1) // +1: a valid address when every rank sends nothing
		sp := unsafe.Pointer(&recv[0])
		if len(send) > 0 {
			sp = unsafe.Pointer(&send[0])
		}
		if err := check("MPI_Allgatherv", C.plumb_allgatherv(sp, C.int(len(send)), unsafe.Pointer(&recv[0]), &counts[0], &displs[0])); err != nil {
			return err
		}
		out = make([][]byte, w.size)
		for r := range out {
			out[r] = recv[displs[r] : displs[r]+counts[r] : displs[r]+counts[r]]
		}
		return nil
	})
	return out, err
}

func (w *world) Barrier() error {
	return w.do("barrier", func() error { return check("MPI_Barrier", C.plumb_barrier()) })
}

// Close calls MPI_Finalize, unless a collective timed out: that call is
// still pending, so the process should just exit (non-zero), which makes
// mpirun end the job.
func (w *world) Close() error {
	w.mu.Lock()
	broken, closed := w.broken, w.closed
	w.closed = true
	w.mu.Unlock()
	if broken != nil || closed {
		return nil
	}
	done := make(chan error, 1)
	w.calls <- func() { done <- check("MPI_Finalize", C.plumb_finalize()) }
	return <-done
}

// Abort ends every rank of the job that mpirun started, this one included,
// with status code (MPI_Abort on MPI_COMM_WORLD): call it, after printing
// why, when this rank stops with an error, so that the other ranks end
// within seconds instead of waiting in their next collective for the
// watchdog (Timeout). Open MPI's mpirun also ends the job when a rank
// exits non-zero without MPI_Finalize, but that is the launcher's policy,
// not MPI's, and it needs the rank to exit first; Abort ends the job
// from wherever the rank stopped. A rank
// that has not joined the group yet joins it first (MPI_Init), so that an
// error before Open (a model that fails to build, data that fails to
// load) ends the job too. Abort does nothing, and returns, when the
// process was not started by a launcher as one of several, or after
// Close; the caller should exit non-zero after it in any case.
func Abort(code int) {
	if Launched() <= 1 {
		return
	}
	c, err := Open()
	if err != nil {
		return
	}
	w := c.(*world)
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	returned := make(chan struct{})
	select {
	case w.calls <- func() { C.plumb_abort(C.int(code)); close(returned) }:
		// MPI_Abort ends the process; should it return, so does Abort,
		// and the caller exits.
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
		}
	case <-t.C:
		// The MPI thread is still in a collective that timed out: abort
		// from this thread (the process ends either way).
		C.plumb_abort(C.int(code))
	}
}
