package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A failed sync of the directory after the rename is reported.
func TestSaveReportsDirectorySyncError(t *testing.T) {
	defer func(f func(string) error) { syncDir = f }(syncDir)
	syncDir = func(string) error { return errors.New("input/output error") }
	path := filepath.Join(t.TempDir(), "m.safetensors")
	err := Save(path, model(t, 1), nil)
	require.ErrorContains(t, err, "the file is in place, but syncing its directory failed: input/output error")
	require.FileExists(t, path)
}

// fullDisk writes half of what it is given, then fails as a full disk does.
type fullDisk struct{ f io.Writer }

func (d fullDisk) Write(p []byte) (int, error) {
	n, _ := d.f.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

// A save on a full disk removes the temporaries that killed saves left
// behind as well as its own, and leaves the previous checkpoint in place.
func TestSaveOnFullDiskLeavesNoTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.safetensors")
	require.NoError(t, Save(path, model(t, 1), nil))
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := range 20 { // as 20 kill -9s during saves leave them
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf(".m.safetensors.tmp%d", 1000+i)), make([]byte, 4096), 0o600))
	}
	defer func(f func(*os.File) io.Writer) { tempWriter = f }(tempWriter)
	tempWriter = func(f *os.File) io.Writer { return fullDisk{f} }
	err = Save(path, model(t, 2), nil)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorContains(t, err, "checkpoint: save "+path)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"m.safetensors"}, names)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after)
}
