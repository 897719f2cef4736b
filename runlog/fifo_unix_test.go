//go:build unix

package runlog

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A FIFO in place of the log is refused rather than blocking the reader or
// the writer for ever.
func TestFIFORefused(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, FileName), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	_, err := Read(dir)
	require.ErrorContains(t, err, "is not a regular file")
	_, err = Create(dir, Record{})
	require.ErrorContains(t, err, "is not a regular file")
	_, err = Append(dir, Record{})
	require.ErrorContains(t, err, "is not a regular file")
}
