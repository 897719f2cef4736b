//go:build unix

package fileio

import (
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A named pipe is refused before it is opened: opening it for reading
// blocked until a writer came, forever with none.
func TestOpenRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ptb.train.txt")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- WithRaw(p, func(io.Reader) error { return nil }) }()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "is a named pipe (FIFO): want a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
	err := WithFile(p, Limits{}, func(io.Reader) error { return nil })
	assert.ErrorContains(t, err, "named pipe")
}
