package dist

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Comm is a group of processes (ranks 0 to Size()-1) that run the same
// program and meet in collective calls: every rank must make the same calls
// in the same order, with buffers of the same length, or the group hangs
// (and the watchdog ends it; see Timeout). The MPI build (tag mpi) talks to
// the ranks that mpirun started; the default build offers one process
// (Single) and an in-process group for tests (NewGroup).
type Comm interface {
	Rank() int
	Size() int
	// AllreduceFloat32 and AllreduceFloat64 replace buf, on every rank,
	// by the element-wise sum of every rank's buf (MPI_Allreduce with
	// MPI_SUM, in place).
	AllreduceFloat32(buf []float32) error
	AllreduceFloat64(buf []float64) error
	// Broadcast copies root's buf into every other rank's buf, which must
	// have the same length (MPI_Bcast).
	Broadcast(buf []byte, root int) error
	// Allgather returns every rank's send, indexed by rank; the lengths
	// may differ between ranks (MPI_Allgather of the lengths, then
	// MPI_Allgatherv).
	Allgather(send []byte) ([][]byte, error)
	// Barrier returns once every rank has called it.
	Barrier() error
	// Close ends the rank's part in the group (MPI_Finalize); after a
	// timeout it returns at once, since a collective is still pending.
	Close() error
}

// DefaultTimeout is how long a collective call may wait for the other
// ranks before the watchdog gives up, when PLUMB_DIST_TIMEOUT is not set.
// It must cover the longest time one rank works alone between two
// collectives: a training step, and rank 0's evaluation and checkpoint at
// the end of an epoch, while the others wait.
const DefaultTimeout = 10 * time.Minute

// Timeout returns the watchdog's deadline for one collective call:
// PLUMB_DIST_TIMEOUT (a Go duration such as 90s, or seconds) if set and
// valid, else DefaultTimeout.
func Timeout() (time.Duration, error) {
	s := os.Getenv("PLUMB_DIST_TIMEOUT")
	if s == "" {
		return DefaultTimeout, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		sec, err2 := strconv.ParseFloat(s, 64)
		if err2 != nil {
			return 0, fmt.Errorf("dist: PLUMB_DIST_TIMEOUT=%q: want a duration such as 90s or a number of seconds", s)
		}
		d = time.Duration(sec * float64(time.Second))
	}
	if d <= 0 {
		return 0, fmt.Errorf("dist: PLUMB_DIST_TIMEOUT=%q: want a positive duration", s)
	}
	return d, nil
}

// Launched reports the world size that a launcher announced in the
// environment (Open MPI's mpirun, or a PMI launcher such as MPICH's
// Hydra or Slurm's srun), or 0 when the process was started on its own.
func Launched() int {
	for _, k := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"} {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
			return n
		}
	}
	return 0
}

// LaunchedRank reports this process's rank as a launcher announced it
// (see Launched), or 0 when the process was started on its own.
func LaunchedRank() int {
	for _, k := range []string{"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"} {
		if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n >= 0 {
			return n
		}
	}
	return 0
}

// single is the group of one process: every collective leaves its
// buffers as they are.
type single struct{}

// Single returns the one-process group: rank 0 of 1.
func Single() Comm { return single{} }

func (single) Rank() int                          { return 0 }
func (single) Size() int                          { return 1 }
func (single) AllreduceFloat32([]float32) error   { return nil }
func (single) AllreduceFloat64([]float64) error   { return nil }
func (single) Broadcast(_ []byte, root int) error { return checkRoot(root, 1) }
func (single) Allgather(send []byte) ([][]byte, error) {
	return [][]byte{append([]byte(nil), send...)}, nil
}
func (single) Barrier() error { return nil }
func (single) Close() error   { return nil }

func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("dist: broadcast from root %d in a group of %d ranks", root, size)
	}
	return nil
}
