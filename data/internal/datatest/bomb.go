package datatest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/plumbml/plumb/internal/memlimit"
)

// BombCapMiB is the address-space headroom the readers' bomb tests give
// a child process: a hostile input must end in a clear error within it.
const BombCapMiB = 512

// BombDeadline is how long such a test may take, child process included.
const BombDeadline = 10 * time.Second

// RefusedUnderMemoryLimit runs read in a child process capped at
// BombCapMiB (memlimit.Run, so the calling test must be a top-level test
// that calls this first and once) and checks that it ended in an error
// containing every want, within BombDeadline: a crash or an out-of-memory
// death of the child fails the test.
func RefusedUnderMemoryLimit(t *testing.T, read func() error, want ...string) {
	t.Helper()
	start := time.Now()
	msg := memlimit.Run(t, BombCapMiB, read)
	for _, w := range want {
		assert.Contains(t, msg, w)
	}
	assert.Less(t, time.Since(start), BombDeadline)
}
