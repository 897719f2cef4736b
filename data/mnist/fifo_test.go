//go:build unix

package mnist

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/plumbml/plumb/data/internal/datatest"
)

// A FIFO in place of an MNIST file is refused at once instead of
// blocking on open.
func TestLoadRefusesFIFO(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{"x": nil})
	for _, name := range []string{mnistTrainImages, mnistTrainLabels} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Skipf("no FIFOs here: %v", err)
		}
	}
	done := make(chan error, 1)
	go func() { _, _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, " is not a regular file (mode p")
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
