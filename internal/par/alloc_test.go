//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean nothing under -race; this file is built without it.

package par

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type nopJob struct{}

func (nopJob) Do(worker, part int) {}

// After warm-up a Run's team comes from the pool: Run allocates nothing.
func TestRunAllocatesNothing(t *testing.T) {
	var j nopJob
	Run(8, 2, j)
	require.Zero(t, testing.AllocsPerRun(50, func() { Run(8, 2, j) }))
}
