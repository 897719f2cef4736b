//go:build !mpi

package dist

import "fmt"

// Open joins the group the process was launched in. This build has no MPI
// (build with -tags mpi for it), so it returns the one-process group, and
// fails when a launcher such as mpirun started several processes, which
// would otherwise each train alone.
func Open() (Comm, error) {
	if n := Launched(); n > 1 {
		return nil, fmt.Errorf("dist: launched as one of %d processes, but this binary was built without MPI; rebuild it with `go build -tags mpi` (needs libopenmpi-dev)", n)
	}
	return Single(), nil
}

// MPI reports whether this build talks to MPI.
const MPI = false

// Abort ends every rank of the job at once in the MPI build; without MPI
// there is no other rank to end, and it does nothing.
func Abort(code int) {}
